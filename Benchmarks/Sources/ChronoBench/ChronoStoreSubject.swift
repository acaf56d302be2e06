// ChronoStore under the core workloads: one collection of byte records in one store file.

import ChronoStoreEngine

/// A ChronoStore store with one collection. Created with retention `.lastRoots(1)` by the core
/// workloads, so, like SQLite, it keeps no history and frees replaced pages at the next commit.
final class ChronoStoreSubject: KeyValueSubject {
    static let collection = "records"

    let engineName = "ChronoStore"
    let path: String
    private(set) var options: StoreOptions
    private(set) var store: Store

    init(path: String, options: StoreOptions) throws {
        self.path = path
        self.options = options
        store = try Store.create(at: path, options: options)
    }

    func setSyncMode(_ mode: SyncMode) throws {
        let durability: Durability = mode == .durable ? .durable : .deferred
        guard durability != options.durability else { return }
        try store.close()
        options.durability = durability
        store = try Store.open(at: path, options: options)
    }

    func putInOneTransaction(_ records: RecordSet, _ indices: Range<Int>) throws {
        try store.write { transaction in
            for index in indices {
                try transaction.put(records.key(index), records.value(index), in: Self.collection)
            }
        }
    }

    func putEachInItsOwnTransaction(_ records: RecordSet, _ indices: Range<Int>) throws {
        for index in indices {
            try store.write { transaction in
                try transaction.put(records.key(index), records.value(index), in: Self.collection)
            }
        }
    }

    func pointReads(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try store.read { transaction in
            var tally = ReadTally()
            for index in indices {
                if let value = try transaction.value(forKey: records.key(index), in: Self.collection) {
                    tally.add(value)
                }
            }
            return tally
        }
    }

    func rangeScans(_ records: RecordSet, starts: [Int], length: Int) throws -> ReadTally {
        try store.read { transaction in
            var tally = ReadTally()
            for start in starts {
                var seen = 0
                let range = KeyRange(lower: KeyBound(records.key(start), inclusive: true))
                try transaction.scan(Self.collection, range: range, reverse: false) { _, value in
                    tally.add(value)
                    seen += 1
                    return seen < length
                }
            }
            return tally
        }
    }

    func deleteInOneTransaction(_ records: RecordSet, _ indices: [Int]) throws -> Int {
        try store.write { transaction in
            var deleted = 0
            for index in indices where try transaction.delete(records.key(index), in: Self.collection) {
                deleted += 1
            }
            return deleted
        }.0
    }

    /// The data file only; the lock file beside it is always 4 KiB.
    func fileByteCount() throws -> Int64 {
        ScratchDirectory.byteCount(of: path)
    }

    /// Rewrites the head's trees densely on the lowest free pages and truncates the free tail.
    func compact() throws {
        _ = try store.compact()
    }

    /// Pages in use (all pages minus the free tree's), times the page size.
    func liveByteCount() throws -> Int64 {
        let state = try store.snapshot.state
        return Int64(state.pageCount - state.freePageCount) * Int64(store.pageSize)
    }

    func close() throws {
        try store.close()
    }
}
