// Running the typed API's async calls from the benchmark's synchronous timing loop.

import Foundation

/// Runs `body` in a task and blocks the calling thread until it finishes. The benchmark's main
/// thread is not one of the concurrency pool's threads, so blocking it cannot starve the task.
/// The hop into the task costs microseconds, once per timed workload.
func blockingAwait<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) throws -> Result {
    let box = ResultBox<Result>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.outcome = .success(try await body()) } catch { box.outcome = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let outcome = box.outcome else { throw BenchmarkError.unexpected("task finished without a result") }
    return try outcome.get()
}

/// `@unchecked Sendable`: written once by the task before it signals the semaphore, read by the
/// waiting thread only after the semaphore, which orders the two.
private final class ResultBox<Result>: @unchecked Sendable {
    var outcome: Swift.Result<Result, any Error>?
}
