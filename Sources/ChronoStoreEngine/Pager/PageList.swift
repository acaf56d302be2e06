// Lists of page references kept inline in a record or in a chain of list-chunk pages.

/// List chunk page layout (after the 24-byte page header; header count = entries here):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 16 | next chunk (page, birth); none on the last |
/// | 40 | 16·n | entries: (page, birth) |
///
/// Every chunk of a list is born with the record that owns the list.
enum PageList {
    static let nextOffset = PageHeader.byteCount
    static let entriesOffset = nextOffset + PageReference.byteCount

    static func chunkCapacity(pageSize: Int) -> Int {
        (pageSize - entriesOffset) / PageReference.byteCount
    }

    /// How many chunk pages a list of `count` entries needs.
    static func chunkCount(for count: Int, pageSize: Int) -> Int {
        let capacity = chunkCapacity(pageSize: pageSize)
        return (count + capacity - 1) / capacity
    }

    /// Builds the chunk pages of a list on the given (already allocated) pages.
    static func makeChunks(
        _ entries: [PageReference], on pages: [PageID], birth: TransactionID, pageSize: Int
    ) -> (ListDescriptor, [(PageID, PageBuffer, Int)]) {
        guard !pages.isEmpty else { return (ListDescriptor(count: entries.count, firstChunk: .none), []) }
        let capacity = chunkCapacity(pageSize: pageSize)
        var chunks: [(PageID, PageBuffer, Int)] = []
        for (number, page) in pages.enumerated() {
            let buffer = PageBuffer(pageSize: pageSize)
            let next = number + 1 < pages.count ? PageReference(page: pages[number + 1], birth: birth) : .none
            buffer.bytes.storeReference(next, at: nextOffset)
            let slice = entries[min(number * capacity, entries.count)..<min((number + 1) * capacity, entries.count)]
            for (position, entry) in slice.enumerated() {
                buffer.bytes.storeReference(entry, at: entriesOffset + PageReference.byteCount * position)
            }
            chunks.append((page, buffer, slice.count))
        }
        return (ListDescriptor(count: entries.count, firstChunk: PageReference(page: pages[0], birth: birth)), chunks)
    }

    /// Writes inline entries at `offset` in an owner page.
    static func storeInline(_ entries: [PageReference], into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        for (position, entry) in entries.enumerated() {
            bytes.storeReference(entry, at: offset + PageReference.byteCount * position)
        }
    }

    /// Reads a list: inline entries from `owner` at `inlineOffset`, or the chunk chain.
    /// - Throws: a damage ``StoreError`` naming the page when the count is impossible or the
    ///   chunks do not hold exactly `list.count` entries.
    static func read(
        _ list: ListDescriptor, owner: PageBuffer?, inlineOffset: Int, reader: some TreeReading
    ) throws -> [PageReference] {
        try checkCount(list, reader: reader)
        var entries: [PageReference] = []
        if list.isInline {
            guard list.count > 0 else { return [] }
            guard let owner, inlineOffset + PageReference.byteCount * list.count <= owner.pageSize else {
                throw StoreError.malformedPage(
                    page: owner?.pageID ?? .none, reason: "an inline page list of \(list.count) entries does not fit")
            }
            entries.reserveCapacity(list.count)
            for position in 0..<list.count {
                entries.append(owner.readOnly.loadReference(at: inlineOffset + PageReference.byteCount * position))
            }
            return entries
        }
        entries.reserveCapacity(list.count)
        try forEachChunk(list, reader: reader) { chunk in
            for position in 0..<chunk.entryCount {
                entries.append(chunk.readOnly.loadReference(at: entriesOffset + PageReference.byteCount * position))
            }
        }
        return entries
    }

    /// Checks a count read from disk: chunks are pages of the store, so a list can hold no more
    /// than a full chunk on every page.
    private static func checkCount(_ list: ListDescriptor, reader: some TreeReading) throws {
        // pageCount is at most Int.max / pageSize (see StateRecord), so the product cannot overflow.
        let limit = UInt64(chunkCapacity(pageSize: reader.pageSize)) * reader.pageCount
        guard list.count >= 0, UInt64(list.count) <= limit else {
            throw StoreError.malformedPage(page: list.firstChunk.page, reason: "page list count \(list.count) is impossible")
        }
    }

    /// Calls `body` with each verified chunk page of an out-of-line list.
    ///
    /// The count fixes how many chunks the list has (every chunk but the last is full), so the
    /// walk stops there: a chain that loops, runs on or holds empty chunks is damage.
    /// - Throws: a damage ``StoreError`` naming the page.
    static func forEachChunk(_ list: ListDescriptor, reader: some TreeReading, _ body: (PageBuffer) throws -> Void) throws {
        try checkCount(list, reader: reader)
        let capacity = chunkCapacity(pageSize: reader.pageSize)
        var remaining = list.count
        var next = list.firstChunk
        for chunkNumber in 0..<chunkCount(for: list.count, pageSize: reader.pageSize) {
            guard !next.isNone, next.birth == list.firstChunk.birth else {
                throw StoreError.malformedPage(
                    page: next.isNone ? list.firstChunk.page : next.page, reason: "list chunk chain ends after \(chunkNumber) chunks")
            }
            let chunk = try reader.rawPage(next, kind: .listChunk)
            guard chunk.entryCount == min(capacity, remaining) else {
                throw StoreError.malformedPage(page: next.page, reason: "list chunk holds \(chunk.entryCount) entries")
            }
            remaining -= chunk.entryCount
            try body(chunk)
            next = chunk.readOnly.loadReference(at: nextOffset)
        }
        guard next.isNone else {
            throw StoreError.malformedPage(page: list.firstChunk.page, reason: "list chunk chain runs past its \(list.count) entries")
        }
    }
}
