// A serial dispatch queue per store that runs the engine calls that may block: writer waits, syncs, opens.
import Dispatch

/// Runs blocking engine calls off the caller's thread and off Swift's cooperative thread pool.
///
/// Taking the writer can wait for another process's transaction (a file lock), and a durable
/// commit waits for the disk. Run on the caller's thread, those waits would freeze the main
/// actor, or tie up one of the few cooperative threads every task shares. Here they run on a
/// serial queue of the store's own, and the caller's task suspends until the call is done.
/// One queue per store is enough: this process's writers of a store already take turns; only the
/// wait for a durable commit's sync runs beside it (see ``wait(_:)``). A lone commit's own sync,
/// which waits for no other thread, skips both (see `ChronoStore.commit(_:)`).
final class BlockingLane: Sendable {
    private let queue: DispatchQueue
    /// Waits that must not hold up the lane: a durable commit's wait for the sync covering it.
    private let waits: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
        waits = DispatchQueue(label: label + " (waits)", qos: .userInitiated, attributes: .concurrent)
    }

    /// Runs `body` on the lane and returns its result; engine errors become ``ChronoStoreError``.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            queue.async {
                continuation.resume(with: Result { try engineCall(body) })
            }
        }
    }

    /// Runs `body`, a wait (for the disk, or for another thread's sync), beside the lane: calls
    /// on the lane meanwhile go ahead. Engine errors become ``ChronoStoreError``.
    func wait(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waits.async {
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
