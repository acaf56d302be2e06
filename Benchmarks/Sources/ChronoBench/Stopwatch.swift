// Timing a piece of work on the monotonic clock, and taking medians of repeated timings.

/// Measures wall-clock seconds on `ContinuousClock` (monotonic).
enum Stopwatch {
    /// Runs `body` once and returns its result with the seconds it took.
    static func time<Result>(_ body: () throws -> Result) rethrows -> (result: Result, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        return (result, (clock.now - start).seconds)
    }

    /// The median of `samples` (the mean of the two middle ones for an even count).
    static func median(_ samples: [Double]) -> Double {
        precondition(!samples.isEmpty, "median of no samples")
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The value below which `fraction` of `samples` lie (nearest rank).
    static func percentile(_ samples: [Double], _ fraction: Double) -> Double {
        precondition(!samples.isEmpty, "percentile of no samples")
        let sorted = samples.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}
