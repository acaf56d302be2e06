// The valid stores the structure-aware fuzzer starts from, with what every retained root holds.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation

/// Collection → key → value.
typealias FuzzContents = [String: [[UInt8]: [UInt8]]]

/// One valid store file and the contents of each of its roots, for checking reads of a mutated copy.
struct FuzzSeedStore {
    let name: String
    let pageSize: Int
    let bytes: [UInt8]
    /// The contents of every root the store retains, by root id.
    let contents: [TransactionID: FuzzContents]
    /// Every key any root holds, per collection, so reads of absent keys are checked too.
    let keys: [String: Set<[UInt8]>]
    let snapshotName = "pinned"

    /// Builds a store with a two-level tree, values in overflow pages, several roots of history,
    /// a snapshot and a deletion. Without `closeCleanly` the newest slot stays unverified, so
    /// opening a copy walks recovery's state chain.
    static func build(pageSize: Int, closeCleanly: Bool, in directory: TemporaryDirectory) throws -> FuzzSeedStore {
        let path = directory.file("seed-\(pageSize).chrono")
        let options = StoreOptions(pageSize: pageSize, durability: .deferred, retention: .limitless)
        let store = try Store.create(at: path, options: options)
        var generator = SeededGenerator(seed: UInt64(pageSize))
        var current: FuzzContents = [:]
        var contents: [TransactionID: FuzzContents] = [try store.snapshot.state.head.birth: [:]]
        func commit(_ edits: [(String, String, [UInt8]?)]) throws {
            let (_, root) = try store.write { transaction in
                for (collection, key, value) in edits {
                    if let value { try transaction.put(Array(key.utf8), value, in: collection) } else {
                        _ = try transaction.delete(Array(key.utf8), in: collection)
                    }
                }
            }
            for (collection, key, value) in edits { current[collection, default: [:]][Array(key.utf8)] = value }
            if let root { contents[root] = current }
        }
        // About eight leaves under one branch, whatever the page size.
        let keyCount = 96
        let filler = String(repeating: "v", count: pageSize / 14)
        try commit((0..<keyCount).map { ("alpha", "key-\($0)", Array("value \($0) \(filler.prefix(pageSize / 16 + $0 % 40))".utf8)) })
        try commit([("blobs", "large", generator.bytes(pageSize * 3 + 100)), ("blobs", "small", [1, 2, 3]), ("beta", "b", [7])])
        _ = try store.createSnapshot(named: "pinned")
        try commit((0..<(keyCount / 8)).map { ("alpha", "key-\($0 * 5)", $0 % 3 == 0 ? nil : Array("changed \($0)".utf8)) })
        try commit([("blobs", "large", generator.bytes(pageSize * 2 + 7)), ("beta", "c", [8, 9])])
        if closeCleanly { try store.close() } else { try store.synchronize() }
        var keys: [String: Set<[UInt8]>] = [:]
        for version in contents.values {
            for (collection, entries) in version { keys[collection, default: []].formUnion(entries.keys) }
        }
        return FuzzSeedStore(
            name: "\(pageSize)-byte pages, \(closeCleanly ? "closed" : "left open")", pageSize: pageSize,
            bytes: try RawFile.bytes(path), contents: contents, keys: keys)
    }
}

/// Where a crafted edit may land in a page of a given kind: offsets and widths of the fields
/// that steer a reader (counts, offsets, references, lengths, births, kinds).
enum FuzzFields {
    struct Field {
        var offset: Int
        var width: Int
    }

    static func fields(of page: [UInt8], pageSize: Int) -> [Field] {
        var fields = [
            Field(offset: PageHeader.kindOffset, width: 1), Field(offset: PageHeader.countOffset, width: 2),
            Field(offset: PageHeader.pageIDOffset, width: 8), Field(offset: PageHeader.birthOffset, width: 8),
        ]
        let count = Int(UInt16(page[PageHeader.countOffset]) | UInt16(page[PageHeader.countOffset + 1]) << 8)
        switch page[PageHeader.kindOffset] {
        case PageKind.leaf.rawValue:
            for index in 0..<min(count, 64) {
                let slot = NodeLayout.leafOffsetsStart + 2 * index
                guard slot + 2 <= pageSize else { break }
                fields.append(Field(offset: slot, width: 2))
                let entry = Int(UInt16(page[slot]) | UInt16(page[slot + 1]) << 8)
                guard entry + 6 <= pageSize else { continue }
                fields += [Field(offset: entry, width: 2), Field(offset: entry + 2, width: 4)]
                let keyCount = Int(UInt16(page[entry]) | UInt16(page[entry + 1]) << 8)
                let value = entry + 6 + keyCount
                if value + 24 <= pageSize { fields += (0..<3).map { Field(offset: value + 8 * $0, width: 8) } }
            }
        case PageKind.branch.rawValue:
            fields += [Field(offset: NodeLayout.branchFirstChildOffset, width: 8), Field(offset: NodeLayout.branchFirstChildOffset + 8, width: 8)]
            for index in 0..<min(count, 64) {
                let slot = NodeLayout.branchOffsetsStart + 2 * index
                guard slot + 2 <= pageSize else { break }
                fields.append(Field(offset: slot, width: 2))
                let entry = Int(UInt16(page[slot]) | UInt16(page[slot + 1]) << 8)
                guard entry + 2 <= pageSize else { continue }
                fields.append(Field(offset: entry, width: 2))
                let child = entry + 2 + Int(UInt16(page[entry]) | UInt16(page[entry + 1]) << 8)
                if child + 16 <= pageSize { fields += [Field(offset: child, width: 8), Field(offset: child + 8, width: 8)] }
            }
        default:
            // State, root, list chunk and overflow pages keep their fields in 8-byte words.
            fields += stride(from: PageHeader.byteCount, to: min(pageSize, 264), by: 8).map { Field(offset: $0, width: 8) }
            fields += stride(from: 40, to: min(pageSize, 40 + 8 * 16), by: 8).map { Field(offset: $0, width: 8) }
            if page[PageHeader.kindOffset] == PageKind.state.rawValue { fields += journalFields(of: page, pageSize: pageSize) }
        }
        return fields
    }

    /// A state page's journal (format version 4): its byte count, and each record's lengths and
    /// the 8-byte words of its key and value (history entries, free-tree page numbers).
    private static func journalFields(of page: [UInt8], pageSize: Int) -> [Field] {
        var fields = [Field(offset: StateJournal.byteCountOffset, width: 2)]
        let end = min(pageSize, StateJournal.recordsOffset + (Int(page[StateJournal.byteCountOffset]) | Int(page[StateJournal.byteCountOffset + 1]) << 8))
        var cursor = StateJournal.recordsOffset
        for _ in 0..<64 {
            guard cursor + 2 <= end else { break }
            let keyCount = Int(page[cursor + 1])
            let lengthAt = cursor + 2 + keyCount
            guard lengthAt + 2 <= end else { break }
            fields += [Field(offset: cursor, width: 1), Field(offset: cursor + 1, width: 1), Field(offset: lengthAt, width: 2)]
            fields += stride(from: cursor + 2, to: lengthAt - 7, by: 8).map { Field(offset: $0, width: 8) }
            let stored = Int(page[lengthAt]) | Int(page[lengthAt + 1]) << 8
            let valueCount = stored == Int(StateJournal.removedMarker) ? 0 : stored
            fields += stride(from: lengthAt + 2, to: min(end, lengthAt + 2 + valueCount) - 7, by: 8).map { Field(offset: $0, width: 8) }
            cursor = lengthAt + 2 + valueCount
        }
        return fields
    }
}
