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

    /// The holder passes the gate to another thread without releasing it: it calls this, then the
    /// other thread calls ``takeOver()`` before it writes. Both take the gate's mutex, so what the
    /// first holder wrote happens before what the second reads (for the thread sanitizer too,
    /// whatever carried the hand-over between the threads).
    package func handOver() {
        mutex.lock()
        assert(busy, "handing over a gate that is not held")
        mutex.unlock()
    }

    /// The new holder's side of ``handOver()``.
    package func takeOver() {
        mutex.lock()
        assert(busy, "taking over a gate that is not held")
        mutex.unlock()
    }

    package func release() {
        mutex.lock()
        busy = false
        mutex.signal()
        mutex.unlock()
    }
}
