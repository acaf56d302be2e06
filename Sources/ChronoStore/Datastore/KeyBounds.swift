// Ranges over identifiers and index values: inclusive, exclusive or open at either end.
import ChronoStoreEngine

/// One end of a ``KeyBounds``.
public enum RangeBound<Value: OrderedKey>: Sendable {
    /// The end includes `value`.
    case including(Value)
    /// The end stops just short of `value`.
    case excluding(Value)
}

/// A range of identifiers or index values, each end inclusive, exclusive or open (nil).
///
/// ```swift
/// KeyBounds(from: .including(10), to: .excluding(20))   // 10..<20
/// KeyBounds(10...20)                                      // from a Swift range
/// KeyBounds<Int>.all
/// ```
public struct KeyBounds<Value: OrderedKey>: Sendable {
    /// The lower end, or nil for no lower limit.
    public var lower: RangeBound<Value>?
    /// The upper end, or nil for no upper limit.
    public var upper: RangeBound<Value>?

    /// A range between `lower` and `upper` (nil: open).
    public init(from lower: RangeBound<Value>? = nil, to upper: RangeBound<Value>? = nil) {
        self.lower = lower
        self.upper = upper
    }

    /// Every value.
    public static var all: KeyBounds<Value> { KeyBounds() }

    /// The engine range over keys that start with an encoded value in these bounds. `suffixed`
    /// says whether keys continue past the value (non-unique index entries), so an inclusive
    /// upper end must admit every continuation.
    func keyRange(suffixed: Bool) -> KeyRange {
        var range = KeyRange()
        switch lower {
        case .none: break
        case .including(let value)?: range.lower = KeyBound(value.orderedKeyBytes, inclusive: true)
        case .excluding(let value)?:
            let bytes = value.orderedKeyBytes
            if suffixed {
                range.lower = KeyBytes.prefixSuccessor(bytes).map { KeyBound($0, inclusive: true) }
                    ?? KeyBound(bytes + [UInt8](repeating: 0xFF, count: 1024), inclusive: false)
            } else {
                range.lower = KeyBound(bytes, inclusive: false)
            }
        }
        switch upper {
        case .none: break
        case .including(let value)?:
            let bytes = value.orderedKeyBytes
            if suffixed {
                range.upper = KeyBytes.prefixSuccessor(bytes).map { KeyBound($0, inclusive: false) }
            } else {
                range.upper = KeyBound(bytes, inclusive: true)
            }
        case .excluding(let value)?: range.upper = KeyBound(value.orderedKeyBytes, inclusive: false)
        }
        return range
    }
}

extension KeyBounds where Value: Comparable {
    /// `lower...upper`.
    public init(_ range: ClosedRange<Value>) { self.init(from: .including(range.lowerBound), to: .including(range.upperBound)) }
    /// `lower..<upper`.
    public init(_ range: Range<Value>) { self.init(from: .including(range.lowerBound), to: .excluding(range.upperBound)) }
    /// `lower...`.
    public init(_ range: PartialRangeFrom<Value>) { self.init(from: .including(range.lowerBound)) }
    /// `...upper`.
    public init(_ range: PartialRangeThrough<Value>) { self.init(to: .including(range.upperBound)) }
    /// `..<upper`.
    public init(_ range: PartialRangeUpTo<Value>) { self.init(to: .excluding(range.upperBound)) }
}

/// The order of a range load.
public enum RangeOrder: Sendable, Equatable {
    /// Smallest first.
    case ascending
    /// Largest first.
    case descending
}
