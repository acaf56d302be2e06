// A binary semaphore that admits one write transaction at a time within a process.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Admits one holder at a time. Unlike ``Lock`` it may be released from another thread than
/// the one that acquired it, so a transaction can outlive a thread hop.
/// `@unchecked Sendable`: `busy` is only touched while holding `mutex`.
package final class WriterGate: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var busy = false

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Blocks until the gate is free, then takes it.
    package func acquire() {
        pthread_mutex_lock(mutex)
        while busy { pthread_cond_wait(condition, mutex) }
        busy = true
        pthread_mutex_unlock(mutex)
    }

    /// Takes the gate if it is free; returns whether it did.
    package func tryAcquire() -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if busy { return false }
        busy = true
        return true
    }

    package func release() {
        pthread_mutex_lock(mutex)
        busy = false
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
