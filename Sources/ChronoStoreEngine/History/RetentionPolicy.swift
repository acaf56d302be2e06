// Which roots history keeps: the last N, those younger than N days, or all of them.

/// How much history a store keeps. Snapshots and roots that open readers hold are always kept.
package enum RetentionPolicy: Equatable, Sendable, CustomStringConvertible {
    /// Keep every root until ``Store/clearHistory()``.
    case limitless
    /// Keep the head and the `count - 1` roots before it on its history line (undo depth), and
    /// its redo chain; side branches are not kept (see `RetentionRule`).
    case lastRoots(Int)
    /// Keep roots committed within the last `days` days (the head is always kept).
    case days(Int)

    /// The longest age ``days(_:)`` accepts (from 0): about 2,700 years. Longer ones would overflow the
    /// millisecond arithmetic of pruning; ``limitless`` keeps everything anyway.
    package static let maximumDays = 1_000_000
    /// The largest count ``lastRoots(_:)`` accepts (2^40).
    package static let maximumRootCount = 1 << 40

    /// Checks the policy's parameter against the limits above.
    /// - Throws: ``StoreError/invalidRetention(_:)``.
    package func validate() throws {
        switch self {
        case .limitless: return
        case .lastRoots(let count): if (1...Self.maximumRootCount).contains(count) { return }
        case .days(let days): if (0...Self.maximumDays).contains(days) { return }
        }
        throw StoreError.invalidRetention(description)
    }

    var kindByte: UInt8 {
        switch self {
        case .limitless: 0
        case .lastRoots: 1
        case .days: 2
        }
    }

    var parameter: UInt64 {
        switch self {
        case .limitless: 0
        case .lastRoots(let count): UInt64(max(count, 1))
        case .days(let days): UInt64(max(days, 0))
        }
    }

    static func decode(kind: UInt8, parameter: UInt64, page: PageID) throws -> RetentionPolicy {
        switch kind {
        case 0: return .limitless
        // Stores written before the limits existed may hold larger values: clamp, so they open.
        case 1: return .lastRoots(Int(clamping: min(max(parameter, 1), UInt64(maximumRootCount))))
        case 2: return .days(Int(clamping: min(parameter, UInt64(maximumDays))))
        default: throw StoreError.malformedPage(page: page, reason: "unknown retention policy \(kind)")
        }
    }

    package var description: String {
        switch self {
        case .limitless: "all"
        case .lastRoots(let count): "last:\(count)"
        case .days(let days): "days:\(days)"
        }
    }
}
