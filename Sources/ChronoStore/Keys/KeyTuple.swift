// Composite keys: tuples of keys that sort by their first component, then the next.

/// A two-part key that sorts by `first`, then by `second`.
///
/// Swift tuples cannot conform to protocols, so composite identifiers and index values use these
/// structs. The encoding is the components' encodings concatenated; each is self-delimiting.
public struct KeyTuple2<First: OrderedKey, Second: OrderedKey>: OrderedKey {
    /// The component compared first.
    public var first: First
    /// The component compared when the first ones are equal.
    public var second: Second

    /// A key made of `first` and `second`.
    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    /// Appends `first`'s encoding, then `second`'s.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.append(key: first)
        encoder.append(key: second)
    }
}

/// A three-part key that sorts by each component in turn.
public struct KeyTuple3<First: OrderedKey, Second: OrderedKey, Third: OrderedKey>: OrderedKey {
    /// The component compared first.
    public var first: First
    /// The component compared second.
    public var second: Second
    /// The component compared last.
    public var third: Third

    /// A key made of the three components.
    public init(_ first: First, _ second: Second, _ third: Third) {
        self.first = first
        self.second = second
        self.third = third
    }

    /// Appends each component's encoding in turn.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.append(key: first)
        encoder.append(key: second)
        encoder.append(key: third)
    }
}

/// A four-part key that sorts by each component in turn.
public struct KeyTuple4<First: OrderedKey, Second: OrderedKey, Third: OrderedKey, Fourth: OrderedKey>: OrderedKey {
    /// The component compared first.
    public var first: First
    /// The component compared second.
    public var second: Second
    /// The component compared third.
    public var third: Third
    /// The component compared last.
    public var fourth: Fourth

    /// A key made of the four components.
    public init(_ first: First, _ second: Second, _ third: Third, _ fourth: Fourth) {
        self.first = first
        self.second = second
        self.third = third
        self.fourth = fourth
    }

    /// Appends each component's encoding in turn.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.append(key: first)
        encoder.append(key: second)
        encoder.append(key: third)
        encoder.append(key: fourth)
    }
}

extension KeyTuple2: Equatable where First: Equatable, Second: Equatable {}
extension KeyTuple2: Hashable where First: Hashable, Second: Hashable {}
extension KeyTuple2: Codable where First: Codable, Second: Codable {}
extension KeyTuple2: Comparable where First: Comparable, Second: Comparable {
    /// Lexicographic: by `first`, then `second`.
    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.first, lhs.second) < (rhs.first, rhs.second) }
}

extension KeyTuple3: Equatable where First: Equatable, Second: Equatable, Third: Equatable {}
extension KeyTuple3: Hashable where First: Hashable, Second: Hashable, Third: Hashable {}
extension KeyTuple3: Codable where First: Codable, Second: Codable, Third: Codable {}
extension KeyTuple3: Comparable where First: Comparable, Second: Comparable, Third: Comparable {
    /// Lexicographic over the three components.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.first, lhs.second, lhs.third) < (rhs.first, rhs.second, rhs.third)
    }
}

extension KeyTuple4: Equatable where First: Equatable, Second: Equatable, Third: Equatable, Fourth: Equatable {}
extension KeyTuple4: Hashable where First: Hashable, Second: Hashable, Third: Hashable, Fourth: Hashable {}
extension KeyTuple4: Codable where First: Codable, Second: Codable, Third: Codable, Fourth: Codable {}
extension KeyTuple4: Comparable where First: Comparable, Second: Comparable, Third: Comparable, Fourth: Comparable {
    /// Lexicographic over the four components.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.first, lhs.second, lhs.third, lhs.fourth) < (rhs.first, rhs.second, rhs.third, rhs.fourth)
    }
}
