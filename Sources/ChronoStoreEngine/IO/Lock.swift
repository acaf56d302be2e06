// A mutual-exclusion lock over pthread_mutex, usable on every supported platform.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A non-recursive mutex. `@unchecked Sendable`: the pthread mutex itself is the synchronization.
package final class Lock: @unchecked Sendable {
    /// Also the mutex a ``ConditionLock`` waits with.
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` while holding the lock.
    @discardableResult
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A mutex with a condition variable, for waiting until shared state changes. Unlike ``Lock``'s
/// holder, a waiter releases the mutex while it sleeps. `@unchecked Sendable`: the pthread mutex
/// and condition are the synchronization.
package final class ConditionLock: @unchecked Sendable {
    private let base = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    package func lock() { base.lock() }
    package func unlock() { base.unlock() }

    /// Runs `body` while holding the mutex.
    @discardableResult
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result { try base.withLock(body) }

    /// With the mutex held: releases it until signalled (or woken spuriously), then holds it again.
    package func wait() { pthread_cond_wait(condition, base.mutex) }
    /// Wakes one waiter.
    package func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiter.
    package func broadcast() { pthread_cond_broadcast(condition) }
}
