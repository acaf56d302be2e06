// The results of one run: timings, file sizes, memory and the machine, as printed and as JSON.

/// One workload timed on both engines. `ratio` is SQLite's time divided by ChronoStore's:
/// above 1 means ChronoStore was faster.
struct TimedResult: Codable, Sendable {
    var workload: String
    var group: String
    /// Operations in one run (records put, reads, scans, transactions, steps, opens).
    var operationCount: Int
    /// How commits synced, for workloads that commit.
    var syncComparison: String?
    /// Runs per engine; the times are medians over them.
    var runCount: Int
    var chronoStoreSeconds: Double
    var sqliteSeconds: Double
    var ratio: Double
    /// The ratio issue 7 asks for, if any, and whether this run reached it.
    var targetRatio: Double?
    var meetsTarget: Bool?
    var chronoStoreSamples: [Double]
    var sqliteSamples: [Double]
    /// The 1-minute load average when the workload finished: above the core count means other
    /// processes competed for the CPU during it.
    var loadAverage: Double?

    init(
        workload: String, group: String, operationCount: Int, syncComparison: String?, chronoStoreSamples: [Double],
        sqliteSamples: [Double], targetRatio: Double?
    ) {
        self.workload = workload
        self.group = group
        self.operationCount = operationCount
        self.syncComparison = syncComparison
        self.runCount = chronoStoreSamples.count
        self.chronoStoreSamples = chronoStoreSamples
        self.sqliteSamples = sqliteSamples
        chronoStoreSeconds = Stopwatch.median(chronoStoreSamples)
        sqliteSeconds = Stopwatch.median(sqliteSamples)
        ratio = chronoStoreSeconds > 0 ? sqliteSeconds / chronoStoreSeconds : 0
        self.targetRatio = targetRatio
        meetsTarget = targetRatio.map { ratio >= $0 }
        loadAverage = MachineDescription.loadAverage()
    }
}

/// A file size on both engines at one point of the run. `ratio` is ChronoStore's bytes divided
/// by SQLite's: below 1 means ChronoStore's file is smaller.
struct SizeResult: Codable, Sendable {
    var measurement: String
    var chronoStoreBytes: Int64?
    var sqliteBytes: Int64?
    /// What was measured where it is not simply the data file.
    var note: String?
    /// The most ChronoStore's size may be relative to SQLite's, if issue 7 sets one.
    var targetRatio: Double?

    var ratio: Double? {
        guard let chronoStoreBytes, let sqliteBytes, sqliteBytes > 0 else { return nil }
        return Double(chronoStoreBytes) / Double(sqliteBytes)
    }
}

/// A workload that threw instead of finishing. The run records it and goes on with the next
/// group of workloads; the exit status is then 1.
struct WorkloadFailure: Codable, Sendable {
    var workload: String
    var engine: String
    var message: String
}

/// Everything one run measured.
struct BenchmarkReport: Codable, Sendable {
    var command: String
    var label: String?
    var startedAt: String
    var scale: WorkloadScale
    var machine: MachineDescription
    var fsync: FsyncLatency
    /// What a commit's page layout costs on this disk (nil in reports from before it was probed).
    var writeLayout: WriteLayoutCost?
    var timings: [TimedResult] = []
    var sizes: [SizeResult] = []
    var memory: [MemorySample] = []
    var failures: [WorkloadFailure] = []
    /// Facts a reader needs beside the numbers (what is pending, what differs).
    var notes: [String] = []
}
