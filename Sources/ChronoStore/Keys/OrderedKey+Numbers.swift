// Order-preserving encodings of integers, floating-point numbers and Bool.

extension OrderedKey where Self: FixedWidthInteger & UnsignedInteger {
    /// Big-endian, at the type's full width.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) { encoder.appendBigEndian(self) }
}

extension UInt8: OrderedKey {}
extension UInt16: OrderedKey {}
extension UInt32: OrderedKey {}
extension UInt64: OrderedKey {}
extension UInt: OrderedKey {}

extension Int8: OrderedKey {
    /// Two's complement with the sign bit flipped, so negatives sort first.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.appendBigEndian(UInt8(bitPattern: self) ^ 0x80)
    }
}

extension Int16: OrderedKey {
    /// Two's complement with the sign bit flipped, big-endian.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.appendBigEndian(UInt16(bitPattern: self) ^ 0x8000)
    }
}

extension Int32: OrderedKey {
    /// Two's complement with the sign bit flipped, big-endian.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.appendBigEndian(UInt32(bitPattern: self) ^ 0x8000_0000)
    }
}

extension Int64: OrderedKey {
    /// Two's complement with the sign bit flipped, big-endian.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        encoder.appendBigEndian(UInt64(bitPattern: self) ^ 0x8000_0000_0000_0000)
    }
}

extension Int: OrderedKey {
    /// Encoded as `Int64`, so the bytes are the same on every platform.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) { Int64(self).appendOrderedKey(to: &encoder) }
}

extension Double: OrderedKey {
    /// IEEE bits, transformed so byte order is numeric order: positives get the sign bit set,
    /// negatives have every bit inverted.
    ///
    /// Policy: `-0.0` encodes as `0.0` (they are equal in Swift), and every NaN encodes as one
    /// canonical NaN that sorts after `+infinity` (Swift's `<` gives NaN no place at all).
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        let canonical: Double = isNaN ? .nan : (self == 0 ? 0 : self)
        let bits = canonical.bitPattern
        encoder.appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63))
    }
}

extension Float: OrderedKey {
    /// Same scheme as `Double` at 32 bits: `-0.0` as `0.0`, NaN after `+infinity`.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        let canonical: Float = isNaN ? .nan : (self == 0 ? 0 : self)
        let bits = canonical.bitPattern
        encoder.appendBigEndian(bits & (1 << 31) != 0 ? ~bits : bits | (1 << 31))
    }
}

extension Bool: OrderedKey {
    /// One byte: 0 for false, 1 for true, so `false` sorts first.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) { encoder.append(self ? 1 : 0) }
}
