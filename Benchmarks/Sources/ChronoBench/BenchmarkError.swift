// Why a benchmark run stops early.

/// Errors of the harness itself (the engines throw their own).
enum BenchmarkError: Error, CustomStringConvertible {
    case usage(String)
    case system(String, Int32)
    /// The two engines disagreed about what a workload read, so its timings compare different work.
    case resultsDiffer(workload: String, chronoStore: Int, sqlite: Int)
    case unexpected(String)
    /// Step `step` (counting from 1) of `count` failed; the engine's error says why.
    case stepFailed(step: Int, count: Int, underlying: any Error)
    /// A workload failed and was recorded in the report; the run goes on with the next group.
    case workloadFailed(String)

    var description: String {
        switch self {
        case .usage(let message): message
        case .system(let operation, let code): "\(operation) failed with errno \(code)"
        case .resultsDiffer(let workload, let chronoStore, let sqlite):
            "\(workload): ChronoStore counted \(chronoStore) results, SQLite \(sqlite)"
        case .unexpected(let message): message
        case .stepFailed(let step, let count, let underlying): "step \(step) of \(count) failed: \(underlying)"
        case .workloadFailed(let workload): "\(workload) failed"
        }
    }
}
