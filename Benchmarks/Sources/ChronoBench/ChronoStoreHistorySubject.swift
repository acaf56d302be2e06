// ChronoStore under the history workloads: every commit is a root, read and undone natively.

import ChronoStoreEngine
import Foundation

/// A ChronoStore store whose history is its own root chain, kept as its retention policy says.
final class ChronoStoreHistorySubject: HistorySubject {
    static let collection = "records"

    let engineName = "ChronoStore"
    let path: String
    private var options: StoreOptions
    private var store: Store?

    init(path: String, options: StoreOptions) throws {
        self.path = path
        var options = options
        // CHRONO_BENCH_PACKING=off measures history without packing (whole pages), and =inline with
        // packing inside the commits that make it due rather than in packing commits, for comparison.
        switch ProcessInfo.processInfo.environment["CHRONO_BENCH_PACKING"] {
        case "off": options.packing = .disabled
        case "inline": options.packing.inBackground = false
        default: break
        }
        self.options = options
        store = try Store.create(at: path, options: options)
    }

    private var openStore: Store {
        get throws {
            guard let store else { throw BenchmarkError.unexpected("the ChronoStore history store is closed") }
            return store
        }
    }

    func setSyncMode(_ mode: SyncMode) throws {
        let durability: Durability = mode == .durable ? .durable : .deferred
        guard durability != options.durability else { return }
        try closeStore()
        options.durability = durability
        store = try Store.open(at: path, options: options)
    }

    func load(_ records: RecordSet, _ indices: Range<Int>) throws {
        try openStore.write { transaction in
            for index in indices {
                try transaction.put(records.key(index), records.value(index), in: Self.collection)
            }
        }
    }

    func commitUpdates(_ updates: [[Int]], keys records: RecordSet, values: RecordSet) throws {
        let store = try openStore
        var valueIndex = 0
        for (number, keys) in updates.enumerated() {
            do {
                try store.write { transaction in
                    for key in keys {
                        try transaction.put(
                            records.key(key), values.value(valueIndex % values.count), in: Self.collection)
                        valueIndex += 1
                    }
                }
            } catch {
                throw BenchmarkError.stepFailed(step: number + 1, count: updates.count, underlying: error)
            }
        }
    }

    func readAtHead(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try read(try openStore.beginRead(), records, indices)
    }

    /// The root `steps` commits before the head, found in the history listing (root ids are not
    /// consecutive: packing commits take ids too). Looked up before the timed reads.
    func root(stepsBack steps: Int) throws -> TransactionID {
        let items = try openStore.history(limit: steps + 1)
        guard items.count == steps + 1, let root = items.last else {
            throw BenchmarkError.unexpected("the history holds \(items.count) roots, not \(steps + 1)")
        }
        return root.id
    }

    func readAsOf(rootsBack: Int, _ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try readAsOf(root: try root(stepsBack: rootsBack), records, indices)
    }

    func readAsOf(root target: TransactionID, _ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try read(try openStore.beginRead(at: .root(target)), records, indices)
    }

    private func read(_ transaction: ReadTransaction, _ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        defer { transaction.close() }
        var tally = ReadTally()
        for index in indices {
            if let value = try transaction.value(forKey: records.key(index), in: Self.collection) { tally.add(value) }
        }
        return tally
    }

    func undoOneStep() throws {
        try openStore.undo(steps: 1)
    }

    func closeStore() throws {
        try store?.close()
        store = nil
    }

    func openAndRead(_ key: [UInt8]) throws -> ReadTally {
        let store = try Store.open(at: path, options: options)
        self.store = store
        var tally = ReadTally()
        if let value = try store.read({ try $0.value(forKey: key, in: Self.collection) }) { tally.add(value) }
        return tally
    }

    /// Rewrites the head's pages densely and truncates the free tail; retained roots keep theirs.
    func compact() throws {
        _ = try openStore.compact()
    }

    func clearHistory() throws {
        try openStore.clearHistory()
    }

    func retainedVersionCount() throws -> Int {
        Int(try openStore.snapshot.state.retainedRootCount)
    }

    /// The data file only; the lock file beside it is always 4 KiB.
    func fileByteCount() throws -> Int64 {
        ScratchDirectory.byteCount(of: path)
    }

    func close() throws {
        try closeStore()
    }
}
