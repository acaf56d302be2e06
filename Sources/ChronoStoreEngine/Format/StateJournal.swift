// The state journal (format version 4): recent edits of the history trees, carried in the state page.

/// Edits of one engine tree that are not yet in its pages: each key at most once, in key order;
/// a nil value removes the key. The tree's entries are its pages' entries with each journaled
/// key replaced (a value) or removed (nil).
struct TreeJournal: Equatable, Sendable {
    struct Record: Equatable, Sendable {
        var key: [UInt8]
        var value: [UInt8]?
    }

    private(set) var records: [Record] = []
    /// Bytes these records take in the state page (see ``StateJournal``).
    private(set) var encodedByteCount = 0
    /// The state page these records were read from (none for a journal built in memory): a
    /// damaged record is damage there.
    var page: PageID = .none

    static func == (lhs: TreeJournal, rhs: TreeJournal) -> Bool { lhs.records == rhs.records }

    var isEmpty: Bool { records.isEmpty }

    /// The index of `key`, or where it would go.
    func search(_ key: [UInt8]) -> (index: Int, found: Bool) {
        KeyOrder.search(count: records.count) { index in KeyOrder.compare(records[index].key, key) }
    }

    func record(for key: [UInt8]) -> Record? {
        let (index, found) = search(key)
        return found ? records[index] : nil
    }

    private static func byteCount(_ record: Record) -> Int { 4 + record.key.count + (record.value?.count ?? 0) }

    mutating func set(_ key: [UInt8], _ value: [UInt8]?) {
        let (index, found) = search(key)
        if found {
            encodedByteCount -= Self.byteCount(records[index])
            records[index].value = value
        } else {
            records.insert(Record(key: key, value: value), at: index)
        }
        encodedByteCount += Self.byteCount(records[index])
    }

    mutating func forget(_ key: [UInt8]) {
        let (index, found) = search(key)
        if found { encodedByteCount -= Self.byteCount(records.remove(at: index)) }
    }

    mutating func removeAll() {
        records.removeAll()
        encodedByteCount = 0
    }

    /// Appends a record read from disk; the caller checks the order.
    fileprivate mutating func append(_ record: Record) {
        records.append(record)
        encodedByteCount += Self.byteCount(record)
    }
}

/// The journals of the four history trees and the free tree, as the state page stores them from
/// offset 288 (format version 4; zero bytes, an empty journal, in older files):
///
/// | offset | size | field |
/// |---|---|---|
/// | 288 | 2 | journal byte count J (little-endian); 0 = empty |
/// | 290 | 6 | reserved (0) |
/// | 296 | J | records |
///
/// A record: tree (1 byte: 1 history index, 2 lineage index, 3 time index, 4 head timeline, 5 free
/// tree), key length (1 byte), key, value length (2 bytes, little-endian; 0xFFFF = the key is
/// removed), value. Records are in strictly increasing (tree, key) order. Key and value sizes are
/// those of the tree's entries.
package struct StateJournal: Equatable, Sendable {
    static let byteCountOffset = StateRecord.byteCount
    static let recordsOffset = byteCountOffset + 8
    static let removedMarker: UInt16 = 0xFFFF

    enum Tree: UInt8, CaseIterable {
        case historyIndex = 1
        case lineageIndex = 2
        case timeIndex = 3
        case headTimeline = 4
        case freeTree = 5

        var keyByteCount: Int { self == .historyIndex ? 8 : 16 }

        /// Whether an entry of this tree may have `count` value bytes.
        func admitsValue(byteCount count: Int, pageSize: Int) -> Bool {
            switch self {
            case .historyIndex: count == HistoryEntry.byteCount
            case .lineageIndex, .timeIndex: count == 0
            case .headTimeline: count == 8
            case .freeTree: count >= 8 && count % 8 == 0 && count <= 8 * FreeTree.pagesPerEntry(pageSize: pageSize)
            }
        }
    }

    var historyIndex = TreeJournal()
    var lineageIndex = TreeJournal()
    var timeIndex = TreeJournal()
    var headTimeline = TreeJournal()
    var freeTree = TreeJournal()

    package init() {}

    package var isEmpty: Bool { Tree.allCases.allSatisfy { self[$0].isEmpty } }

    subscript(tree: Tree) -> TreeJournal {
        get {
            switch tree {
            case .historyIndex: historyIndex
            case .lineageIndex: lineageIndex
            case .timeIndex: timeIndex
            case .headTimeline: headTimeline
            case .freeTree: freeTree
            }
        }
        set {
            switch tree {
            case .historyIndex: historyIndex = newValue
            case .lineageIndex: lineageIndex = newValue
            case .timeIndex: timeIndex = newValue
            case .headTimeline: headTimeline = newValue
            case .freeTree: freeTree = newValue
            }
        }
    }

    /// Bytes of the records (J).
    var encodedByteCount: Int { Tree.allCases.reduce(0) { $0 + self[$1].encodedByteCount } }

    /// The most record bytes a state page of `pageSize` holds (the format's limit).
    static func capacity(pageSize: Int) -> Int { min(pageSize - recordsOffset, Int(UInt16.max)) }

    /// The record bytes past which a commit writes the journal out to the trees' pages (the
    /// engine's choice, not the format's): the whole page at 4 KiB, at most 8 KiB on larger pages,
    /// since every lookup and scan of these trees merges the journal and every state re-encodes it.
    static func writeOutThreshold(pageSize: Int) -> Int { min(capacity(pageSize: pageSize), 8192) }

    /// Throws `malformedPage` naming `pages[tree]` when a record breaks the format's rules (a key
    /// or value of another size than the tree's, which only a damaged page of that tree can have
    /// handed to the transaction): a state the decoder would refuse is never written.
    func check(pageSize: Int, pages: (Tree) -> PageID) throws {
        for tree in Tree.allCases {
            for record in self[tree].records {
                let valueFits = record.value.map { tree.admitsValue(byteCount: $0.count, pageSize: pageSize) } ?? true
                guard record.key.count == tree.keyByteCount, valueFits else {
                    throw StoreError.malformedPage(
                        page: pages(tree), reason: "an entry of \(record.key.count) key bytes does not belong in this tree")
                }
            }
        }
    }

    func encode(into bytes: UnsafeMutableRawBufferPointer) {
        let count = encodedByteCount
        precondition(count <= Self.capacity(pageSize: bytes.count), "the state journal outgrew its page")
        bytes.storeLittleEndian(UInt16(count), at: Self.byteCountOffset)
        var cursor = Self.recordsOffset
        for tree in Tree.allCases {
            for record in self[tree].records {
                bytes[cursor] = tree.rawValue
                bytes[cursor + 1] = UInt8(record.key.count)
                cursor += 2
                // Whole copies (the precondition above bounds them): a checked store a byte cost
                // about 12 k instructions a commit with a few hundred bytes of records.
                UnsafeMutableRawBufferPointer(rebasing: bytes[cursor..<cursor + record.key.count]).copyBytes(from: record.key)
                cursor += record.key.count
                if let value = record.value {
                    bytes.storeLittleEndian(UInt16(value.count), at: cursor)
                    cursor += 2
                    UnsafeMutableRawBufferPointer(rebasing: bytes[cursor..<cursor + value.count]).copyBytes(from: value)
                    cursor += value.count
                } else {
                    bytes.storeLittleEndian(Self.removedMarker, at: cursor)
                    cursor += 2
                }
            }
        }
    }

    /// Decodes the journal of a verified state page: every record must be whole, of its tree's
    /// sizes and in order, and the bytes after the records zero (`malformedPage` otherwise).
    static func decode(_ bytes: UnsafeRawBufferPointer, page: PageID) throws -> StateJournal {
        func malformed(_ reason: String) -> StoreError { .malformedPage(page: page, reason: "state journal: \(reason)") }
        let count = Int(bytes.loadLittleEndian(at: byteCountOffset, as: UInt16.self))
        guard (byteCountOffset + 2..<recordsOffset).allSatisfy({ bytes[$0] == 0 }) else { throw malformed("reserved bytes are not zero") }
        guard count <= capacity(pageSize: bytes.count) else { throw malformed("\(count) bytes do not fit in the page") }
        // Each tree's records are gathered in an array of its own and stored once at the end:
        // `journal[tree]` has a getter and a setter, so appending through it would copy the
        // tree's records so far at every record (quadratic in the journal's length).
        var trees = [TreeJournal](repeating: TreeJournal(), count: Tree.allCases.count)
        let end = recordsOffset + count
        var cursor = recordsOffset
        var previous: (tree: UInt8, key: [UInt8])?
        while cursor < end {
            guard end - cursor >= 2, let tree = Tree(rawValue: bytes[cursor]) else { throw malformed("record at \(cursor) names no tree") }
            let keyCount = Int(bytes[cursor + 1])
            guard keyCount == tree.keyByteCount, end - cursor - 2 - keyCount >= 2 else { throw malformed("record at \(cursor) has a bad key") }
            let key = Array(bytes[(cursor + 2)..<(cursor + 2 + keyCount)])
            cursor += 2 + keyCount
            let valueCount = bytes.loadLittleEndian(at: cursor, as: UInt16.self)
            cursor += 2
            var value: [UInt8]?
            if valueCount != removedMarker {
                guard tree.admitsValue(byteCount: Int(valueCount), pageSize: bytes.count), end - cursor >= Int(valueCount) else {
                    throw malformed("record before \(cursor) has a bad value")
                }
                value = Array(bytes[cursor..<(cursor + Int(valueCount))])
                cursor += Int(valueCount)
            }
            if let previous, previous.tree > tree.rawValue || (previous.tree == tree.rawValue && KeyOrder.compare(previous.key, key) >= 0) {
                throw malformed("records out of order")
            }
            previous = (tree.rawValue, key)
            trees[Int(tree.rawValue) - 1].append(TreeJournal.Record(key: key, value: value))
        }
        guard Self.isZero(UnsafeRawBufferPointer(rebasing: bytes[end...])) else {
            throw malformed("bytes after the records are not zero")
        }
        var journal = StateJournal()
        for tree in Tree.allCases {
            var records = trees[Int(tree.rawValue) - 1]
            records.page = page
            journal[tree] = records
        }
        return journal
    }

    /// Whether every byte is zero, eight at a time (the rest of a state page, checked at every
    /// open and every refresh).
    private static func isZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while bytes.count - index >= 8 {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }
}
