// A first-come, first-served async mutex: admits one writer task at a time without blocking threads.
import ChronoStoreEngine

/// Serializes this process's write transactions on one store.
///
/// The engine's own writer gate blocks a thread; a task that waited there could starve the
/// cooperative thread pool while the writer it waits for is suspended inside its transaction.
/// Waiting here suspends instead, so only one task per store ever reaches the engine's gate.
///
/// `@unchecked Sendable`: `busy` and `waiters` are guarded by `lock`.
final class AsyncGate: @unchecked Sendable {
    private let lock = Lock()
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the gate is free, then holds it. Not cancellable: a waiter always gets its turn.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = lock.withLock { () -> Bool in
                if busy {
                    waiters.append(continuation)
                    return false
                }
                busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Passes the gate to the next waiter, or frees it.
    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty {
                busy = false
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}
