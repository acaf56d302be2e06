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
    static func read(_ reference: OverflowReference, reader: some TreeReading) throws -> [UInt8] {
        let perPage = dataCapacity(pageSize: reader.pageSize)
        guard reference.length <= UInt64(Int.max) else {
            throw StoreError.malformedPage(page: reference.index.page, reason: "overflow length \(reference.length) is impossible")
        }
        var result: [UInt8] = []
        result.reserveCapacity(Int(reference.length))
        try forEachIndexPage(reference, reader: reader) { index, dataPages in
            for page in dataPages {
                let data = try reader.rawPage(PageReference(page: page, birth: reference.index.birth), kind: .overflowData)
                let count = data.entryCount
                guard count <= perPage, result.count + count <= Int(reference.length) else {
                    throw StoreError.malformedPage(page: page, reason: "overflow data length \(count) does not match")
                }
                result.append(contentsOf: UnsafeRawBufferPointer(rebasing: data.readOnly[dataOffset..<(dataOffset + count)]))
            }
        }
        guard result.count == Int(reference.length) else {
            throw StoreError.malformedPage(page: reference.index.page, reason: "overflow value is shorter than recorded")
        }
        return result
    }

    /// Calls `body` with each index page and the data pages it lists.
    static func forEachIndexPage(
        _ reference: OverflowReference, reader: some TreeReading, _ body: (PageReference, [PageID]) throws -> Void
    ) throws {
        var next = reference.index
        var visited = 0
        while !next.isNone {
            let index = try reader.rawPage(next, kind: .overflowIndex)
            let count = index.entryCount
            guard count <= indexCapacity(pageSize: reader.pageSize) else {
                throw StoreError.malformedPage(page: next.page, reason: "overflow index lists \(count) pages")
            }
            var pages: [PageID] = []
            pages.reserveCapacity(count)
            for position in 0..<count {
                pages.append(PageID(index.readOnly.loadLittleEndian(at: dataIDsOffset + 8 * position, as: UInt64.self)))
            }
            try body(next, pages)
            let following = index.readOnly.loadReference(at: nextIndexOffset)
            visited += 1
            guard following.isNone || following.birth == reference.index.birth, visited <= (1 << 24) else {
                throw StoreError.malformedPage(page: next.page, reason: "overflow index chain is inconsistent")
            }
            next = following
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
