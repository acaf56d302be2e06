// A binary semaphore that admits one write transaction at a time within a process.

/// Admits one holder at a time. Unlike ``Lock`` it may be released from another thread than
/// the one that acquired it, so a transaction can outlive a thread hop.
/// `@unchecked Sendable`: `busy` is only touched while holding `mutex`.
package final class WriterGate: @unchecked Sendable {
    private let mutex = ConditionLock()
    private var busy = false


    /// Blocks until the gate is free, then takes it.
    package func acquire() {
        mutex.lock()
        while busy { mutex.wait() }
        busy = true
        mutex.unlock()
    }

    /// Takes the gate if it is free; returns whether it did.
    package func tryAcquire() -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        if busy { return false }
        busy = true
        return true
    }

    package func release() {
        mutex.lock()
        busy = false
        mutex.signal()
        mutex.unlock()
    }
}
