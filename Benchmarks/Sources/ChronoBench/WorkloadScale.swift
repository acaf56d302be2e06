// How many records and operations each workload uses, at full size and in `--quick` mode.

/// The sizes of one benchmark run. `--quick` divides every count by ten, including the history
/// depths (retention, as-of distance, undo steps), so the workloads keep their shape.
struct WorkloadScale: Codable, Sendable {
    var name: String
    /// Records bulk-loaded by the core workloads.
    var recordCount: Int
    /// Durable (and, separately, deferred) commits of one put each.
    var singleCommitCount: Int
    var batchCount: Int
    var batchSize: Int
    var pointReadCount: Int
    var rangeScanCount: Int
    var rangeScanLength: Int
    /// Records loaded before the history workloads start updating them.
    var historyBaseRecordCount: Int
    var historyTransactionCount: Int
    var historyKeysPerTransaction: Int
    /// N in ChronoStore's `.lastRoots(N)`; SQLite deletes history older than N transactions.
    var retainedRootCount: Int
    /// How many roots back the as-of reads look.
    var asOfDistance: Int
    var asOfReadCount: Int
    var undoStepCount: Int
    /// Small Codable structs persisted and loaded by the typed workloads.
    var typedRecordCount: Int
    /// Timed opens per store; the median is reported.
    var openRepetitions: Int
    /// `pwrite` + `fdatasync` pairs timed to measure the disk.
    var fsyncProbeCount: Int
    /// Runs of each short, repeatable workload per engine; the median is reported.
    var repetitions: Int

    static let full = WorkloadScale(
        name: "full", recordCount: 1_000_000, singleCommitCount: 1_000, batchCount: 100, batchSize: 1_000,
        pointReadCount: 1_000_000, rangeScanCount: 500_000, rangeScanLength: 10,
        historyBaseRecordCount: 100_000, historyTransactionCount: 100_000, historyKeysPerTransaction: 10,
        retainedRootCount: 1_000, asOfDistance: 1_000, asOfReadCount: 100_000, undoStepCount: 1_000,
        typedRecordCount: 100_000, openRepetitions: 5, fsyncProbeCount: 200, repetitions: 3)

    static let quick = WorkloadScale(
        name: "quick", recordCount: 100_000, singleCommitCount: 100, batchCount: 10, batchSize: 1_000,
        pointReadCount: 100_000, rangeScanCount: 50_000, rangeScanLength: 10,
        historyBaseRecordCount: 10_000, historyTransactionCount: 10_000, historyKeysPerTransaction: 10,
        retainedRootCount: 100, asOfDistance: 100, asOfReadCount: 10_000, undoStepCount: 100,
        typedRecordCount: 10_000, openRepetitions: 5, fsyncProbeCount: 50, repetitions: 3)
}
