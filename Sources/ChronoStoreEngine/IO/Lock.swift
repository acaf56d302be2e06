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

/// A mutex with condition variables, for waiting until shared state changes. Unlike ``Lock``'s
/// holder, a waiter releases the mutex while it sleeps. Several conditions on the one mutex let
/// each kind of waiter be woken alone: a broadcast wakes only the waiters of its condition.
/// `@unchecked Sendable`: the pthread mutex and conditions are the synchronization.
package final class ConditionLock: @unchecked Sendable {
    private let base = Lock()
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int

    /// - Parameter conditionCount: how many conditions (numbered from 0) the mutex has.
    package init(conditionCount: Int = 1) {
        precondition(conditionCount > 0, "a condition lock needs a condition")
        self.conditionCount = conditionCount
        conditions = .allocate(capacity: conditionCount)
        conditions.initialize(repeating: pthread_cond_t(), count: conditionCount)
        #if canImport(Darwin)
            // Timed waits are relative there (`pthread_cond_timedwait_relative_np`).
            for index in 0..<conditionCount { pthread_cond_init(conditions + index, nil) }
        #else
            // Timed waits measure the monotonic clock: a wall clock set back must not stretch them.
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            for index in 0..<conditionCount { pthread_cond_init(conditions + index, &attributes) }
            pthread_condattr_destroy(&attributes)
        #endif
    }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        conditions.deallocate()
    }

    package func lock() { base.lock() }
    package func unlock() { base.unlock() }

    /// Runs `body` while holding the mutex.
    @discardableResult
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result { try base.withLock(body) }

    /// With the mutex held: releases it until `condition` is signalled (or on a spurious wake-up),
    /// then holds it again.
    package func wait(_ condition: Int = 0) { pthread_cond_wait(self.condition(condition), base.mutex) }
    /// With the mutex held: as ``wait(_:)``, but returns after about `timeout` nanoseconds at the
    /// latest (measured on the monotonic clock).
    package func wait(_ condition: Int = 0, timeoutNanoseconds timeout: UInt64) {
        #if canImport(Darwin)
            var spec = timespec(tv_sec: .init(timeout / 1_000_000_000), tv_nsec: .init(timeout % 1_000_000_000))
            _ = pthread_cond_timedwait_relative_np(self.condition(condition), base.mutex, &spec)
        #else
            let deadline = Self.monotonicNanoseconds() &+ timeout
            var spec = timespec()
            spec.tv_sec = .init(deadline / 1_000_000_000)
            spec.tv_nsec = .init(deadline % 1_000_000_000)
            _ = pthread_cond_timedwait(self.condition(condition), base.mutex, &spec)
        #endif
    }

    /// The monotonic clock in nanoseconds: what timed waits measure.
    package static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Wakes one waiter of `condition`.
    package func signal(_ condition: Int = 0) { pthread_cond_signal(self.condition(condition)) }
    /// Wakes every waiter of `condition`.
    package func broadcast(_ condition: Int = 0) { pthread_cond_broadcast(self.condition(condition)) }

    private func condition(_ index: Int) -> UnsafeMutablePointer<pthread_cond_t> {
        precondition(index >= 0 && index < conditionCount, "no condition \(index)")
        return conditions + index
    }
}
