// A serial dispatch queue per store that runs the engine calls that may block: writer waits, syncs, opens.
import Dispatch

/// Runs blocking engine calls off the caller's thread and off Swift's cooperative thread pool.
///
/// Taking the writer can wait for another process's transaction (a file lock), and a durable
/// commit waits for the disk. Run on the caller's thread, those waits would freeze the main
/// actor, or tie up one of the few cooperative threads every task shares. Here they run on a
/// serial queue of the store's own, and the caller's task suspends until the call is done.
/// One queue per store is enough: this process's writers of a store already take turns. A durable
/// commit's wait for its sync runs on no thread at all: the task suspends and the engine's relay
/// resumes it (see `ChronoStore.commit(_:)`); a lone commit syncs on the calling thread.
final class BlockingLane: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Runs `body` on the lane and returns its result; engine errors become ``ChronoStoreError``.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            queue.async {
                continuation.resume(with: Result { try engineCall(body) })
            }
        }
    }
}

/// Carries a value that is not `Sendable` to the lane and back. Sound only because the task that
/// hands it over is suspended until the lane is done with it, so one thread uses it at a time.
struct LaneHandoff<Value>: @unchecked Sendable {
    let value: Value
}
