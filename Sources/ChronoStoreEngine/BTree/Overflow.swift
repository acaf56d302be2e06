// Large values: written once into overflow data pages listed by a chain of overflow index pages.

/// Overflow page layouts (after the 24-byte page header):
///
/// Index page (header count = data pages listed here):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 16 | next index page (page, birth); none on the last |
/// | 40 | 8·n | data page numbers (each born with this index page) |
///
/// Data page (header count = bytes of the value held here): the bytes start at offset 24.
enum Overflow {
    static let nextIndexOffset = PageHeader.byteCount
    static let dataIDsOffset = nextIndexOffset + PageReference.byteCount
    static let dataOffset = PageHeader.byteCount

    static func dataCapacity(pageSize: Int) -> Int { pageSize - dataOffset }
    static func indexCapacity(pageSize: Int) -> Int { (pageSize - dataIDsOffset) / 8 }

    /// Writes `value` into newly allocated overflow pages.
    static func write(_ value: [UInt8], owner: PageOwner, editor: some TreeEditing) throws -> OverflowReference {
        let pageSize = editor.pageSize
        let perPage = dataCapacity(pageSize: pageSize)
        let dataCount = (value.count + perPage - 1) / perPage
        var dataPages: [PageID] = []
        dataPages.reserveCapacity(dataCount)
        for chunk in 0..<dataCount {
            let start = chunk * perPage
            let count = min(perPage, value.count - start)
            let buffer = PageBuffer(pageSize: pageSize)
            value.withUnsafeBytes { source in
                (buffer.bytes.baseAddress! + dataOffset).copyMemory(from: source.baseAddress! + start, byteCount: count)
            }
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .raw(buffer, kind: .overflowData, count: count))
            dataPages.append(page)
        }
        let perIndex = indexCapacity(pageSize: pageSize)
        let indexCount = max(1, (dataPages.count + perIndex - 1) / perIndex)
        var indexPages: [PageID] = []
        for _ in 0..<indexCount { indexPages.append(try editor.allocatePage(owner: owner)) }
        for indexNumber in 0..<indexCount {
            let buffer = PageBuffer(pageSize: pageSize)
            let next = indexNumber + 1 < indexCount
                ? PageReference(page: indexPages[indexNumber + 1], birth: editor.transaction) : .none
            buffer.bytes.storeReference(next, at: nextIndexOffset)
            let slice = dataPages[min(indexNumber * perIndex, dataPages.count)..<min((indexNumber + 1) * perIndex, dataPages.count)]
            for (position, page) in slice.enumerated() {
                buffer.bytes.storeLittleEndian(page.rawValue, at: dataIDsOffset + 8 * position)
            }
            editor.setDirty(indexPages[indexNumber], .raw(buffer, kind: .overflowIndex, count: slice.count))
        }
        return OverflowReference(
            index: PageReference(page: indexPages[0], birth: editor.transaction), length: UInt64(value.count))
    }

    /// Reads a whole overflow value, verifying every page.
    /// - Throws: a damage ``StoreError`` naming the page when a page is damaged or the pages do not
    ///   add up to the recorded length.
    static func read(_ reference: OverflowReference, reader: some TreeReading) throws -> [UInt8] {
        let perPage = dataCapacity(pageSize: reader.pageSize)
        let length = try checkedLength(reference, reader: reader)
        var result: [UInt8] = []
        result.reserveCapacity(length)
        try forEachIndexPage(reference, reader: reader) { index, dataPages in
            for page in dataPages {
                let data = try reader.rawPage(PageReference(page: page, birth: reference.index.birth), kind: .overflowData)
                let count = data.entryCount
                guard count <= perPage, result.count + count <= length else {
                    throw StoreError.malformedPage(page: page, reason: "overflow data length \(count) does not match")
                }
                result.append(contentsOf: UnsafeRawBufferPointer(rebasing: data.readOnly[dataOffset..<(dataOffset + count)]))
            }
        }
        guard result.count == length else {
            throw StoreError.malformedPage(page: reference.index.page, reason: "overflow value is shorter than recorded")
        }
        return result
    }

    /// The recorded length, once it is known to fit in the pages the store has.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming the index page.
    private static func checkedLength(_ reference: OverflowReference, reader: some TreeReading) throws -> Int {
        // pageCount is at most Int.max / pageSize (see StateRecord), so the product cannot overflow.
        let limit = UInt64(dataCapacity(pageSize: reader.pageSize)) * reader.pageCount
        guard reference.length <= limit else {
            throw StoreError.malformedPage(
                page: reference.index.page, reason: "overflow length \(reference.length) exceeds what the store can hold")
        }
        return Int(reference.length)
    }

    /// Calls `body` with each index page and the data pages it lists.
    ///
    /// The recorded length fixes how many data and index pages the value has, so the walk stops
    /// there: a chain that loops or runs on is damage, not an endless walk.
    /// - Throws: a damage ``StoreError`` naming the page.
    static func forEachIndexPage(
        _ reference: OverflowReference, reader: some TreeReading, _ body: (PageReference, [PageID]) throws -> Void
    ) throws {
        let length = try checkedLength(reference, reader: reader)
        let perPage = dataCapacity(pageSize: reader.pageSize)
        let perIndex = indexCapacity(pageSize: reader.pageSize)
        var remaining = (length + perPage - 1) / perPage
        let indexPageCount = max(1, (remaining + perIndex - 1) / perIndex)
        var next = reference.index
        for indexNumber in 0..<indexPageCount {
            guard !next.isNone, next.birth == reference.index.birth else {
                throw StoreError.malformedPage(
                    page: next.isNone ? reference.index.page : next.page, reason: "overflow index chain ends after \(indexNumber) pages")
            }
            let index = try reader.rawPage(next, kind: .overflowIndex)
            let count = index.entryCount
            guard count == min(perIndex, remaining) else {
                throw StoreError.malformedPage(page: next.page, reason: "overflow index lists \(count) pages")
            }
            let pages = (0..<count).map { position in
                PageID(index.readOnly.loadLittleEndian(at: dataIDsOffset + 8 * position, as: UInt64.self))
            }
            remaining -= count
            try body(next, pages)
            next = index.readOnly.loadReference(at: nextIndexOffset)
        }
        guard next.isNone else {
            throw StoreError.malformedPage(page: reference.index.page, reason: "overflow index chain runs past its value")
        }
    }

    /// Releases every page of an overflow value.
    static func release(_ reference: OverflowReference, owner: PageOwner, editor: some TreeEditing) throws {
        var pages: [PageReference] = []
        try forEachIndexPage(reference, reader: editor) { index, dataPages in
            pages.append(index)
            for page in dataPages { pages.append(PageReference(page: page, birth: reference.index.birth)) }
        }
        for page in pages { editor.releasePage(page, owner: owner) }
    }
}
