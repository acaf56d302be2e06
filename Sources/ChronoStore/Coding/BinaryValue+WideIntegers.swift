// 128-bit integers in the binary format: values that fit 64 bits as ordinary integers, wider ones
// as tags 14 and 15.

extension BinaryValue {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func integer(_ value: Int128) -> BinaryValue {
        if let small = Int64(exactly: value) { return .signed(small) }
        return .wideSigned(high: Int64(truncatingIfNeeded: value >> 64), low: UInt64(truncatingIfNeeded: value))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func integer(_ value: UInt128) -> BinaryValue {
        if let small = UInt64(exactly: value) { return .unsigned(small) }
        return .wideUnsigned(high: UInt64(truncatingIfNeeded: value >> 64), low: UInt64(truncatingIfNeeded: value))
    }

    /// A wide value as a `T`, or nil when `T` cannot hold it. Wide values need more than 64 bits,
    /// so only 128-bit types can; generic, so it needs no availability.
    static func wide<T: FixedWidthInteger>(_ type: T.Type, negative: Bool, high: UInt64, low: UInt64) -> T? {
        guard T.bitWidth >= 128 else { return nil }
        if negative && !T.isSigned { return nil }
        if !negative && T.isSigned && T.bitWidth == 128 && high >> 63 != 0 { return nil }
        return T(truncatingIfNeeded: high) << 64 | T(truncatingIfNeeded: low)
    }

    /// The decimal digits of the 128-bit magnitude high·2⁶⁴ + low.
    static func decimalDigits(high: UInt64, low: UInt64) -> String {
        let chunk: UInt64 = 10_000_000_000_000_000_000  // 10^19, the largest power of ten in 64 bits
        let (upper, carry) = high.quotientAndRemainder(dividingBy: chunk)
        let (quotient, remainder) = chunk.dividingFullWidth((carry, low))
        if upper == 0 && quotient == 0 { return String(remainder) }
        let tail = String(remainder)
        return decimalDigits(high: upper, low: quotient) + String(repeating: "0", count: 19 - tail.count) + tail
    }

    /// The JSON number of a wide value.
    var wideDecimal: String? {
        switch self {
        case .wideUnsigned(let high, let low): return Self.decimalDigits(high: high, low: low)
        case .wideSigned(let high, let low) where high < 0:
            // Two's complement: the magnitude is the bitwise complement plus one.
            let magnitudeLow = ~low &+ 1
            let magnitudeHigh = ~UInt64(bitPattern: high) &+ (magnitudeLow == 0 ? 1 : 0)
            return "-" + Self.decimalDigits(high: magnitudeHigh, low: magnitudeLow)
        case .wideSigned(let high, let low): return Self.decimalDigits(high: UInt64(bitPattern: high), low: low)
        default: return nil
        }
    }
}
