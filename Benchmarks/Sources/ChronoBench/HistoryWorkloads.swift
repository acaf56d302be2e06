// The history workloads of issue 7: versioned updates under two retentions, as-of reads, undo, open.

import ChronoStoreEngine

/// For each retention (the last `retainedRootCount` roots, then limitless), on a fresh store of
/// `historyBaseRecordCount` records: `historyTransactionCount` transactions of
/// `historyKeysPerTransaction` updates to random existing keys, committed as `sync` says, then
/// the file sizes; for the last-N stores, compaction (vs VACUUM) and the sizes again. On the
/// limitless stores only: as-of reads `asOfDistance` roots back and the
/// same reads at the head; `undoStepCount` single-step undos, durable (vs FULL); then the time
/// to open and read one key with all roots retained, and again after clearing history. Last, the
/// last-N run again with secure delete on both sides (`StoreOptions.secureDelete` against
/// `PRAGMA secure_delete = ON`): what overwriting every freed page costs.
struct HistoryWorkloads {
    static let group = "history"

    let scale: WorkloadScale
    let scratch: ScratchDirectory
    let cacheByteCount: Int
    let seed: UInt64
    /// How the update transactions (and the last-N compaction) commit; undo is always durable.
    let sync: SyncMode

    func run(_ runner: ComparisonRunner) throws {
        let records = RecordSet(count: scale.historyBaseRecordCount, seed: seed)
        let values = RecordSet(count: 10_000, seed: seed &+ 1)
        var generator = SeededGenerator(seed: seed &+ 2)
        let updates = (0..<scale.historyTransactionCount).map { _ in
            generator.indices(count: scale.historyKeysPerTransaction, below: records.count)
        }
        let reads = generator.indices(count: scale.asOfReadCount, below: records.count)
        let context = Context(records: records, values: values, updates: updates, reads: reads)
        for retained in Set([scale.retainedRootCount, 100, 1_000]).sorted() {
            try continuingAfterFailure { try runRetention(runner, context, retained: retained) }
        }
        try continuingAfterFailure { try runRetention(runner, context, retained: nil) }
        try continuingAfterFailure { try runSinglePuts(runner, context) }
        try continuingAfterFailure {
            try runRetention(runner, context, retained: scale.retainedRootCount, secureDelete: true)
        }
    }

    /// Commits before the single-put size baseline: more than ChronoStore's packing window and
    /// batch (8 + 8 roots), whose whole pages are a fixed cost rather than a per-commit one.
    static let singlePutWarmUpCount = 100

    /// Bytes a small single-put commit leaves in the file under limitless retention, for each
    /// engine: file growth over `singlePutCount` commits of one 150-byte update each, after
    /// ``singlePutWarmUpCount`` commits.
    private func runSinglePuts(_ runner: ComparisonRunner, _ context: Context) throws {
        let chronoStore = try ChronoStoreHistorySubject(
            path: scratch.file("history-puts.chrono"),
            options: StoreOptions(
                durability: sync == .durable ? .durable : .deferred, cacheByteCount: cacheByteCount, retention: .limitless))
        let sqlite = try SQLiteHistorySubject(
            path: scratch.file("history-puts.sqlite"), cacheByteCount: cacheByteCount, mode: sync, retainedVersionCount: nil)
        defer {
            try? chronoStore.close()
            try? sqlite.close()
            scratch.removeStore("history-puts.chrono")
            scratch.removeStore("history-puts.sqlite")
        }
        try chronoStore.load(context.records, 0..<context.records.count)
        try sqlite.load(context.records, 0..<context.records.count)
        let count = scale.historyTransactionCount / 10
        var generator = SeededGenerator(seed: seed &+ 3)
        let puts = (0..<count).map { _ in generator.indices(count: 1, below: context.records.count) }
        // Steady state: the first commits fill ChronoStore's packing window (the newest roots keep
        // their replaced pages whole, a fixed cost whatever the history length) and SQLite's WAL.
        let warmUp = (0..<Self.singlePutWarmUpCount).map { _ in generator.indices(count: 1, below: context.records.count) }
        try chronoStore.commitUpdates(warmUp, keys: context.records, values: context.values)
        try sqlite.commitUpdates(warmUp, keys: context.records, values: context.values)
        let chronoBefore = try chronoStore.fileByteCount()
        let sqliteBefore = try sqlite.fileByteCount()
        try runner.compare(
            "history: \(count) transactions x 1 update, limitless", group: Self.group, operationCount: count, sync: sync,
            chronoStore: { _ in
                try chronoStore.commitUpdates(puts, keys: context.records, values: context.values)
                return nil
            },
            sqlite: { _ in
                try sqlite.commitUpdates(puts, keys: context.records, values: context.values)
                return nil
            })
        try runner.recordSize(
            SizeResult(
                measurement: "bytes retained per single-put commit, limitless",
                chronoStoreBytes: (try chronoStore.fileByteCount() - chronoBefore) / Int64(count),
                sqliteBytes: (try sqlite.fileByteCount() - sqliteBefore) / Int64(count),
                note: "file growth over \(count) commits of one update after \(Self.singlePutWarmUpCount) warm-up commits, "
                    + "divided by the commits; target: ChronoStore <= 1 KiB"))
    }

    private struct Context {
        let records: RecordSet
        let values: RecordSet
        let updates: [[Int]]
        let reads: [Int]
    }

    /// One pair of stores under one retention; `retained` nil means limitless.
    private func runRetention(
        _ runner: ComparisonRunner, _ context: Context, retained: Int?, secureDelete: Bool = false
    ) throws {
        let name = (retained.map { "last-\($0)" } ?? "limitless") + (secureDelete ? "-secure" : "")
        let retention: RetentionPolicy = retained.map { .lastRoots($0) } ?? .limitless
        var options = StoreOptions(
            durability: sync == .durable ? .durable : .deferred, cacheByteCount: cacheByteCount,
            retention: retention)
        options.secureDelete = secureDelete
        let chronoStore = try ChronoStoreHistorySubject(path: scratch.file("history-\(name).chrono"), options: options)
        let sqlite = try SQLiteHistorySubject(
            path: scratch.file("history-\(name).sqlite"), cacheByteCount: cacheByteCount, mode: sync,
            retainedVersionCount: retained, secureDelete: secureDelete)
        defer {
            try? chronoStore.close()
            try? sqlite.close()
            scratch.removeStore("history-\(name).chrono")
            scratch.removeStore("history-\(name).sqlite")
        }
        try chronoStore.load(context.records, 0..<context.records.count)
        try sqlite.load(context.records, 0..<context.records.count)
        let chronoLoaded = try chronoStore.fileByteCount()
        let sqliteLoaded = try sqlite.fileByteCount()

        let label = (retained.map { "last \($0) roots" } ?? "limitless") + (secureDelete ? ", secure delete" : "")
        try runner.compare(
            "history: \(context.updates.count) transactions x \(scale.historyKeysPerTransaction) updates, \(label)",
            group: Self.group, operationCount: context.updates.count, sync: sync,
            chronoStore: { _ in
                try chronoStore.commitUpdates(context.updates, keys: context.records, values: context.values)
                return nil
            },
            sqlite: { _ in
                try sqlite.commitUpdates(context.updates, keys: context.records, values: context.values)
                return nil
            })
        try runner.recordSize(
            SizeResult(
                measurement: "after history, \(label)", chronoStoreBytes: chronoStore.fileByteCount(),
                sqliteBytes: sqlite.fileByteCount(),
                note: "\(try chronoStore.retainedVersionCount()) ChronoStore roots retained, "
                    + "\(try sqlite.retainedVersionCount()) SQLite versions",
                targetRatio: retained == nil ? 2 : 1.5))
        let kept = Int64(min(retained ?? context.updates.count, context.updates.count))
        try runner.recordSize(
            SizeResult(
                measurement: "bytes per retained transaction, \(label)",
                chronoStoreBytes: (try chronoStore.fileByteCount() - chronoLoaded) / kept,
                sqliteBytes: (try sqlite.fileByteCount() - sqliteLoaded) / kept,
                note: "file growth since the load, divided by the \(kept) transactions history keeps"))
        if retained != nil {
            try runner.compare(
                "compaction after history, \(label) (compact vs VACUUM)", group: Self.group, operationCount: 1,
                sync: sync,
                chronoStore: { _ in
                    try chronoStore.compact()
                    return nil
                },
                sqlite: { _ in
                    try sqlite.compact()
                    return nil
                })
            try runner.recordSize(
                SizeResult(
                    measurement: "after history and compaction, \(label)",
                    chronoStoreBytes: chronoStore.fileByteCount(),
                    sqliteBytes: sqlite.fileByteCount()))
        } else {
            try historyReads(runner, context, chronoStore, sqlite)
            try undo(runner, context, chronoStore, sqlite)
            try opening(runner, context, chronoStore, sqlite)
        }
    }

    private func historyReads(
        _ runner: ComparisonRunner, _ context: Context, _ chronoStore: ChronoStoreHistorySubject,
        _ sqlite: SQLiteHistorySubject
    ) throws {
        let distance = scale.asOfDistance
        let near = try chronoStore.root(stepsBack: distance)
        try runner.compare(
            "as-of reads (\(context.reads.count), \(distance) roots back)", group: Self.group,
            operationCount: context.reads.count, runs: scale.repetitions,
            chronoStore: { _ in try chronoStore.readAsOf(root: near, context.records, context.reads) },
            sqlite: { _ in try sqlite.readAsOf(rootsBack: distance, context.records, context.reads) })
        let deep = context.updates.count * 9 / 10
        let deepRoot = try chronoStore.root(stepsBack: deep)
        try runner.compare(
            "as-of reads (\(context.reads.count), \(deep) roots back: deep, packed)", group: Self.group,
            operationCount: context.reads.count, runs: scale.repetitions,
            chronoStore: { _ in try chronoStore.readAsOf(root: deepRoot, context.records, context.reads) },
            sqlite: { _ in try sqlite.readAsOf(rootsBack: deep, context.records, context.reads) })
        try runner.compare(
            "reads at head (\(context.reads.count), same store)", group: Self.group,
            operationCount: context.reads.count, runs: scale.repetitions,
            chronoStore: { _ in try chronoStore.readAtHead(context.records, context.reads) },
            sqlite: { _ in try sqlite.readAtHead(context.records, context.reads) })
    }

    private func undo(
        _ runner: ComparisonRunner, _ context: Context, _ chronoStore: ChronoStoreHistorySubject,
        _ sqlite: SQLiteHistorySubject
    ) throws {
        try chronoStore.setSyncMode(.durable)
        try sqlite.setSyncMode(.durable)
        let steps = scale.undoStepCount
        try runner.compare(
            "undo \(steps) steps, one at a time", group: Self.group, operationCount: steps, sync: .durable,
            chronoStore: { _ in
                for _ in 0..<steps { try chronoStore.undoOneStep() }
                return nil
            },
            sqlite: { _ in
                for _ in 0..<steps { try sqlite.undoOneStep() }
                return nil
            })
        // Both heads must now show the same contents.
        let chronoStoreHead = try chronoStore.readAtHead(context.records, context.reads)
        let sqliteHead = try sqlite.readAtHead(context.records, context.reads)
        guard chronoStoreHead == sqliteHead else {
            throw BenchmarkError.resultsDiffer(
                workload: "reads after undo", chronoStore: chronoStoreHead.count, sqlite: sqliteHead.count)
        }
    }

    private func opening(
        _ runner: ComparisonRunner, _ context: Context, _ chronoStore: ChronoStoreHistorySubject,
        _ sqlite: SQLiteHistorySubject
    ) throws {
        let key = context.records.key(0)
        let prepare: (ComparisonRunner.Engine, Int) throws -> Void = { engine, _ in
            if engine == .chronoStore { try chronoStore.closeStore() } else { try sqlite.closeStore() }
        }
        let roots = try chronoStore.retainedVersionCount()
        try runner.compare(
            "open + first read, \(roots) roots retained", group: Self.group, operationCount: 1,
            runs: scale.openRepetitions, prepare: prepare,
            chronoStore: { _ in try chronoStore.openAndRead(key) }, sqlite: { _ in try sqlite.openAndRead(key) })
        try runner.compare(
            "clear history (\(roots) roots)", group: Self.group, operationCount: 1, sync: .durable,
            chronoStore: { _ in
                try chronoStore.clearHistory()
                return nil
            },
            sqlite: { _ in
                try sqlite.clearHistory()
                return nil
            })
        let remaining = try chronoStore.retainedVersionCount()
        try runner.compare(
            "open + first read, \(remaining) root\(remaining == 1 ? "" : "s") retained", group: Self.group,
            operationCount: 1, runs: scale.openRepetitions, prepare: prepare,
            chronoStore: { _ in try chronoStore.openAndRead(key) }, sqlite: { _ in try sqlite.openAndRead(key) })
    }
}
