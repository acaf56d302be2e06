// The core workloads of issue 7: load, single-put commits, batches, reads, scans, deletes, sizes.

import ChronoStoreEngine
import Foundation

/// Runs the core workloads on one ChronoStore store and one SQLite database, in this order:
/// 1. bulk load of `recordCount` records in one durable transaction;
/// 2. single-put commits, durable, then durable from 8 threads at once (group commit), then
///    deferred (fresh keys each run);
/// 3. batches of puts, durable (fresh keys);
/// 4. random point reads of loaded keys;
/// 5. range scans starting at random loaded keys;
/// 6. sizes, then deleting every other loaded key in one durable transaction, then sizes again,
///    then ChronoStore's compaction against SQLite's VACUUM, and the sizes after them.
struct CoreWorkloads {
    static let group = "core"

    let scale: WorkloadScale
    let scratch: ScratchDirectory
    let cacheByteCount: Int
    let seed: UInt64

    func run(_ runner: ComparisonRunner) throws {
        let records = RecordSet(count: layout.totalCount, seed: seed)
        runner.sampleMemory("core records generated (\(Formatting.bytes(Int64(records.byteCount))))")
        var chronoOptions = StoreOptions(durability: .durable, cacheByteCount: cacheByteCount, retention: .lastRoots(1))
        // CHRONO_BENCH_MMAP=off reads with pread into the page cache instead of the memory map, for comparison.
        if ProcessInfo.processInfo.environment["CHRONO_BENCH_MMAP"] == "off" { chronoOptions.memoryMappedReads = false }
        let chronoStore = try ChronoStoreSubject(path: scratch.file("core.chrono"), options: chronoOptions)
        let sqlite = try SQLiteSubject(
            path: scratch.file("core.sqlite"), cacheByteCount: cacheByteCount, mode: .durable)
        defer {
            try? chronoStore.close()
            try? sqlite.close()
            scratch.removeStore("core.chrono")
            scratch.removeStore("core.sqlite")
        }
        try writeWorkloads(runner, records, chronoStore, sqlite)
        try readWorkloads(runner, records, chronoStore, sqlite)
        try deleteWorkload(runner, records, chronoStore, sqlite)
    }

    /// Which record indices each workload uses: loaded records first, then fresh ones for the
    /// single-put runs (durable, then deferred) and the batches.
    private var layout: (loaded: Range<Int>, singles: Int, concurrentSingles: Int, deferredSingles: Int, batches: Int, totalCount: Int) {
        let singles = scale.recordCount
        let concurrentSingles = singles + scale.singleCommitCount * scale.repetitions
        let deferredSingles = concurrentSingles + Self.committerCount * scale.singleCommitCount * scale.repetitions
        let batches = deferredSingles + scale.singleCommitCount * scale.repetitions
        return (0..<scale.recordCount, singles, concurrentSingles, deferredSingles, batches,
                batches + scale.batchCount * scale.batchSize)
    }

    /// Threads committing at once in the group-commit workload.
    static let committerCount = 8

    private func writeWorkloads(
        _ runner: ComparisonRunner, _ records: RecordSet, _ chronoStore: ChronoStoreSubject, _ sqlite: SQLiteSubject
    ) throws {
        let layout = layout
        try runner.compare(
            "bulk load (\(scale.recordCount) puts, 1 transaction)", group: Self.group,
            operationCount: scale.recordCount, sync: .durable, target: 2,
            chronoStore: { _ in
                try chronoStore.putInOneTransaction(records, layout.loaded)
                return nil
            },
            sqlite: { _ in
                try sqlite.putInOneTransaction(records, layout.loaded)
                return nil
            })
        try runner.recordSize(
            SizeResult(
                measurement: "after bulk load", chronoStoreBytes: chronoStore.fileByteCount(),
                sqliteBytes: sqlite.fileByteCount()))

        let count = scale.singleCommitCount
        func singles(_ base: Int, _ run: Int) -> Range<Int> { base + run * count..<base + (run + 1) * count }
        try runner.compare(
            "single-put commits (\(count))", group: Self.group, operationCount: count, sync: .durable, target: 1,
            runs: scale.repetitions,
            chronoStore: { run in
                try chronoStore.putEachInItsOwnTransaction(records, singles(layout.singles, run))
                return nil
            },
            sqlite: { run in
                try sqlite.putEachInItsOwnTransaction(records, singles(layout.singles, run))
                return nil
            })

        try concurrentSingles(runner, records, chronoStore, sqlite)

        try chronoStore.setSyncMode(.deferred)
        try sqlite.setSyncMode(.deferred)
        try runner.compare(
            "single-put commits (\(count)), deferred", group: Self.group, operationCount: count, sync: .deferred,
            runs: scale.repetitions,
            chronoStore: { run in
                try chronoStore.putEachInItsOwnTransaction(records, singles(layout.deferredSingles, run))
                return nil
            },
            sqlite: { run in
                try sqlite.putEachInItsOwnTransaction(records, singles(layout.deferredSingles, run))
                return nil
            })
        try chronoStore.setSyncMode(.durable)
        try sqlite.setSyncMode(.durable)

        let batched = layout.batches..<layout.batches + scale.batchCount * scale.batchSize
        try runner.compare(
            "batch writes (\(scale.batchCount) transactions x \(scale.batchSize) puts)", group: Self.group,
            operationCount: batched.count, sync: .durable, target: 2,
            chronoStore: { _ in
                try chronoStore.putInBatches(records, batched, batchSize: scale.batchSize)
                return nil
            },
            sqlite: { _ in
                try sqlite.putInBatches(records, batched, batchSize: scale.batchSize)
                return nil
            })
    }

    /// Group commit: `committerCount` threads each commit `singleCommitCount` single-put durable
    /// transactions at once (SQLite's connection takes them in turn). Notes ChronoStore's speed-up
    /// over the single committer of the previous workload.
    private func concurrentSingles(
        _ runner: ComparisonRunner, _ records: RecordSet, _ chronoStore: ChronoStoreSubject, _ sqlite: SQLiteSubject
    ) throws {
        let count = scale.singleCommitCount
        let committers = Self.committerCount
        let base = layout.concurrentSingles
        func ranges(_ run: Int) -> [Range<Int>] {
            (0..<committers).map { thread in
                let start = base + (run * committers + thread) * count
                return start..<start + count
            }
        }
        let workload = "single-put commits, \(committers) threads at once (\(committers) x \(count))"
        try runner.compare(
            workload, group: Self.group, operationCount: committers * count, sync: .durable, runs: scale.repetitions,
            chronoStore: { run in
                try chronoStore.putEachFromThreads(records, ranges(run))
                return nil
            },
            sqlite: { run in
                try sqlite.putEachFromThreads(records, ranges(run))
                return nil
            })
        // The disk's sync time drifts within seconds here: compare throughputs in back-to-back
        // pairs, which put the records just written again (same values: both engines' contents
        // stay equal for the workloads that follow).
        var speedUps: [Double] = []
        for run in 0..<scale.repetitions {
            let single = try Stopwatch.time { try chronoStore.putEachInItsOwnTransaction(records, ranges(run)[0]) }
            let concurrent = try Stopwatch.time { try chronoStore.putEachFromThreads(records, ranges(run)) }
            speedUps.append(Double(committers) * single.seconds / concurrent.seconds)
        }
        let speedUp = Stopwatch.median(speedUps)
        runner.note(
            "group commit: \(committers) threads committing at once reach \(Formatting.ratio(speedUp)) the throughput of one "
                + "committer (median of \(speedUps.count) back-to-back pairs: "
                + speedUps.map(Formatting.ratio).joined(separator: ", ") + "; target 4x)")
        Console.progress("group commit speed-up over one committer: \(Formatting.ratio(speedUp))")
    }

    private func readWorkloads(
        _ runner: ComparisonRunner, _ records: RecordSet, _ chronoStore: ChronoStoreSubject, _ sqlite: SQLiteSubject
    ) throws {
        var generator = SeededGenerator(seed: seed &+ 1)
        let readIndices = generator.indices(count: scale.pointReadCount, below: scale.recordCount)
        try runner.compare(
            "point reads (\(scale.pointReadCount), random keys)", group: Self.group,
            operationCount: scale.pointReadCount, target: 3, runs: scale.repetitions,
            chronoStore: { _ in try chronoStore.pointReads(records, readIndices) },
            sqlite: { _ in try sqlite.pointReads(records, readIndices) })

        let scanStarts = generator.indices(count: scale.rangeScanCount, below: scale.recordCount)
        try runner.compare(
            "range scans (\(scale.rangeScanCount) x \(scale.rangeScanLength) entries)", group: Self.group,
            operationCount: scale.rangeScanCount, target: 2, runs: scale.repetitions,
            chronoStore: { _ in try chronoStore.rangeScans(records, starts: scanStarts, length: scale.rangeScanLength)
            },
            sqlite: { _ in try sqlite.rangeScans(records, starts: scanStarts, length: scale.rangeScanLength) })
    }

    private func deleteWorkload(
        _ runner: ComparisonRunner, _ records: RecordSet, _ chronoStore: ChronoStoreSubject, _ sqlite: SQLiteSubject
    ) throws {
        try runner.recordSize(
            SizeResult(
                measurement: "after all writes, before deletes", chronoStoreBytes: chronoStore.fileByteCount(),
                sqliteBytes: sqlite.fileByteCount()))
        let doomed = Array(stride(from: 0, to: scale.recordCount, by: 2))
        try runner.compare(
            "delete half the keys (\(doomed.count), 1 transaction)", group: Self.group,
            operationCount: doomed.count, sync: .durable, target: 1.5,
            chronoStore: { _ in ReadTally(count: try chronoStore.deleteInOneTransaction(records, doomed)) },
            sqlite: { _ in ReadTally(count: try sqlite.deleteInOneTransaction(records, doomed)) })
        try runner.recordSize(
            SizeResult(
                measurement: "after deletes", chronoStoreBytes: chronoStore.fileByteCount(),
                sqliteBytes: sqlite.fileByteCount()))
        let liveBeforeCompaction = try chronoStore.liveByteCount()
        try runner.compare(
            "compaction (compact vs VACUUM)", group: Self.group, operationCount: 1, sync: .durable,
            chronoStore: { _ in
                try chronoStore.compact()
                return nil
            },
            sqlite: { _ in
                try sqlite.vacuum()
                return nil
            })
        try runner.recordSize(
            SizeResult(
                measurement: "after compaction", chronoStoreBytes: chronoStore.fileByteCount(),
                sqliteBytes: sqlite.fileByteCount(),
                note: "ChronoStore compact() against SQLite VACUUM; ChronoStore pages in use: "
                    + "\(Formatting.bytes(liveBeforeCompaction)) before, "
                    + "\(Formatting.bytes(try chronoStore.liveByteCount())) after",
                targetRatio: 1.2))
    }
}
