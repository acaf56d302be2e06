// Wall-clock time for commit records and retention, read without Foundation; tests inject their own.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The wall clock, in milliseconds since 1970.
package enum Clock {
    package static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// Where a store reads the time it stamps on commits, snapshots and retention decisions: the
/// system clock, or a function a test supplies to make the clock jump. Two values are equal
/// when they read the same function.
package struct WallClock: Sendable, Equatable {
    /// Holds the function; compared by identity.
    private final class Source: Sendable {
        let read: @Sendable () -> Int64
        init(_ read: @escaping @Sendable () -> Int64) { self.read = read }
    }

    private let source: Source

    /// A clock that calls `read` for the time in milliseconds since 1970.
    package init(_ read: @escaping @Sendable () -> Int64) { source = Source(read) }

    /// The system's real-time clock.
    package static let system = WallClock { Clock.nowMilliseconds() }

    package func nowMilliseconds() -> Int64 { source.read() }

    package static func == (left: WallClock, right: WallClock) -> Bool { left.source === right.source }
}
