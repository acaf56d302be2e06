// The order-preserving key encoding: a protocol for key types and the byte writer they append to.

/// A value that encodes to bytes whose unsigned lexicographic order equals the value's order.
///
/// Identifiers and index values are stored as these bytes, so a range scan over the bytes visits
/// values in the order Swift's `<` gives them. Every encoding is self-delimiting: a composite key
/// (``KeyTuple2`` and friends) is its components' encodings concatenated, and no encoding is a
/// proper prefix of another value's encoding of the same type.
///
/// Conforming types in this module: every fixed-width integer, `Float`, `Double`, `Bool`,
/// `String`, `UUID`, `Date`, `Optional` of a key, and ``KeyTuple2``–``KeyTuple4``.
/// Conform your own type by appending the encodings of the fields that define its order.
public protocol OrderedKey: Sendable {
    /// Appends this value's order-preserving encoding. Cost: O(encoded size).
    func appendOrderedKey(to encoder: inout OrderedKeyEncoder)
}

extension OrderedKey {
    /// This value's order-preserving encoding on its own.
    public var orderedKeyBytes: [UInt8] {
        var encoder = OrderedKeyEncoder()
        appendOrderedKey(to: &encoder)
        return encoder.bytes
    }
}

/// Accumulates the order-preserving bytes of one key. A value type: copying it copies the bytes.
public struct OrderedKeyEncoder: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty encoder.
    public init() {}

    /// Appends raw bytes. Use it only for fixed-width fields whose byte order is their order.
    public mutating func append(contentsOf raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// Appends one raw byte.
    public mutating func append(_ byte: UInt8) { bytes.append(byte) }

    /// Appends `value` big-endian, so numeric order is byte order.
    mutating func appendBigEndian<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
    }

    /// Appends another key's encoding.
    public mutating func append(key: some OrderedKey) { key.appendOrderedKey(to: &self) }
}

/// Byte helpers for ranges and prefixes of encoded keys.
enum KeyBytes {
    /// The smallest byte string greater than every string that starts with `prefix`, or nil when
    /// there is none (the prefix is all 0xFF bytes).
    static func prefixSuccessor(_ prefix: [UInt8]) -> [UInt8]? {
        var result = prefix
        while let last = result.last {
            if last < 0xFF {
                result[result.count - 1] = last + 1
                return result
            }
            result.removeLast()
        }
        return nil
    }
}
