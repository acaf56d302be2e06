// Reading a root page with its page lists.

/// A root record together with the page it was decoded from, so its inline lists can be read.
struct LoadedRoot {
    let record: RootRecord
    let page: PageBuffer

    init(_ reference: PageReference, reader: some TreeReading) throws {
        page = try reader.rawPage(reference, kind: .root)
        record = try RootRecord.decode(page)
    }

    /// The pages this root's transaction replaced or freed, with their births (its deadlist).
    func invalidatedPages(reader: some TreeReading) throws -> [PageReference] {
        try PageList.read(record.invalidated, owner: page, inlineOffset: record.inlineAreaOffset, reader: reader)
    }

    /// The tree and overflow pages this root's transaction wrote.
    func introducedPages(reader: some TreeReading) throws -> [PageReference] {
        let offset = record.inlineAreaOffset
            + (record.invalidated.isInline ? record.invalidated.count * PageReference.byteCount : 0)
        return try PageList.read(record.introduced, owner: page, inlineOffset: offset, reader: reader)
    }

    /// The root page itself and the chunk pages of its lists.
    func metadataPages(reader: some TreeReading) throws -> [PageReference] {
        var pages = [page.reference]
        for list in [record.invalidated, record.introduced] where !list.isInline {
            try PageList.forEachChunk(list, reader: reader) { chunk in pages.append(chunk.reference) }
        }
        return pages
    }
}
