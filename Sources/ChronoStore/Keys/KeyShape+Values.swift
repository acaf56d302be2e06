// Decoding ordered key bytes into plain values by their shape, and encoding such values back.
package import Foundation

/// One decoded identifier (or component of one), without its Swift type.
package indirect enum KeyValue: Equatable, Sendable {
    case signed(Int64)
    case unsigned(UInt64)
    case number(Double)
    case bool(Bool)
    case string(String)
    case uuid(UUID)
    /// Seconds since 2001-01-01 (`Date.timeIntervalSinceReferenceDate`).
    case date(Double)
    case null
    case tuple([KeyValue])
}

extension KeyShape {
    /// The value `bytes` encode, or nil when they are not exactly one key of this shape.
    package func decode(_ bytes: [UInt8]) -> KeyValue? {
        var reader = KeyByteReader(bytes: bytes)
        guard let value = reader.read(self), reader.isAtEnd else { return nil }
        return value
    }

    /// The ordered key bytes of `value`, the same the Swift type writes; nil when the value does
    /// not fit the shape (a number out of range, a string for a number, a tuple of another length).
    package func encode(_ value: KeyValue) -> [UInt8]? {
        var encoder = OrderedKeyEncoder()
        guard append(value, to: &encoder) else { return nil }
        return encoder.bytes
    }

    private func append(_ value: KeyValue, to encoder: inout OrderedKeyEncoder) -> Bool {
        switch (self, value) {
        case (.signed(let width), .signed(let number)): return Self.appendSigned(number, width: width, to: &encoder)
        case (.signed(let width), .unsigned(let number)):
            guard let signed = Int64(exactly: number) else { return false }
            return Self.appendSigned(signed, width: width, to: &encoder)
        case (.unsigned(let width), .unsigned(let number)): return Self.appendUnsigned(number, width: width, to: &encoder)
        case (.unsigned(let width), .signed(let number)):
            guard let unsigned = UInt64(exactly: number) else { return false }
            return Self.appendUnsigned(unsigned, width: width, to: &encoder)
        case (.double, _), (.float, _):
            guard let number = value.asDouble else { return false }
            if self == .float { encoder.append(key: Float(number)) } else { encoder.append(key: number) }
        case (.bool, .bool(let flag)): encoder.append(key: flag)
        case (.string, .string(let text)): encoder.append(key: text)
        case (.uuid, .uuid(let id)): encoder.append(key: id)
        case (.date, .date(let seconds)): encoder.append(key: Date(timeIntervalSinceReferenceDate: seconds))
        case (.optional, .null): encoder.append(0)
        case (.optional(let wrapped), _):
            encoder.append(1)
            return wrapped.append(value, to: &encoder)
        case (.tuple(let shapes), .tuple(let values)):
            guard shapes.count == values.count else { return false }
            for (shape, component) in zip(shapes, values) where !shape.append(component, to: &encoder) { return false }
        default: return false
        }
        return true
    }

    private static func appendSigned(_ number: Int64, width: Int, to encoder: inout OrderedKeyEncoder) -> Bool {
        switch width {
        case 1: guard let value = Int8(exactly: number) else { return false }; encoder.append(key: value)
        case 2: guard let value = Int16(exactly: number) else { return false }; encoder.append(key: value)
        case 4: guard let value = Int32(exactly: number) else { return false }; encoder.append(key: value)
        default: encoder.append(key: number)
        }
        return true
    }

    private static func appendUnsigned(_ number: UInt64, width: Int, to encoder: inout OrderedKeyEncoder) -> Bool {
        switch width {
        case 1: guard let value = UInt8(exactly: number) else { return false }; encoder.append(key: value)
        case 2: guard let value = UInt16(exactly: number) else { return false }; encoder.append(key: value)
        case 4: guard let value = UInt32(exactly: number) else { return false }; encoder.append(key: value)
        default: encoder.append(key: number)
        }
        return true
    }
}

extension KeyValue {
    /// A number as a `Double` (integers convert when exact).
    var asDouble: Double? {
        switch self {
        case .number(let value): value
        case .signed(let value): Double(exactly: value)
        case .unsigned(let value): Double(exactly: value)
        default: nil
        }
    }
}

/// Reads keys of known shapes from the front of a byte string.
private struct KeyByteReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func read(_ shape: KeyShape) -> KeyValue? {
        switch shape {
        case .signed(let width):
            guard let raw = readBigEndian(width) else { return nil }
            let flipped = raw ^ (UInt64(1) << (width * 8 - 1))
            // Sign-extend from the field's width.
            let shift = UInt64(64 - width * 8)
            return .signed(Int64(bitPattern: flipped << shift) >> shift)
        case .unsigned(let width): return readBigEndian(width).map { .unsigned($0) }
        case .double: return readBigEndian(8).map { .number(Self.double(fromOrdered: $0)) }
        case .float: return readBigEndian(4).map { .number(Double(Self.float(fromOrdered: UInt32($0)))) }
        case .date: return readBigEndian(8).map { .date(Self.double(fromOrdered: $0)) }
        case .bool:
            guard let byte = readBigEndian(1), byte <= 1 else { return nil }
            return .bool(byte == 1)
        case .string: return readString().map { .string($0) }
        case .uuid:
            guard offset + 16 <= bytes.count else { return nil }
            let raw = Array(bytes[offset..<offset + 16])
            offset += 16
            return .uuid(UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                                     raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])))
        case .optional(let wrapped):
            guard let marker = readBigEndian(1) else { return nil }
            if marker == 0 { return .null }
            return marker == 1 ? read(wrapped) : nil
        case .tuple(let shapes):
            var values: [KeyValue] = []
            for component in shapes {
                guard let value = read(component) else { return nil }
                values.append(value)
            }
            return .tuple(values)
        }
    }

    private mutating func readBigEndian(_ width: Int) -> UInt64? {
        guard offset + width <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<offset + width] { value = value << 8 | UInt64(byte) }
        offset += width
        return value
    }

    /// Escaped UTF-8 up to the terminator 0x00 0x01 (0x00 0xFF is a 0x00 byte).
    private mutating func readString() -> String? {
        var utf8: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            guard byte == 0 else {
                utf8.append(byte)
                continue
            }
            guard offset < bytes.count else { return nil }
            let next = bytes[offset]
            offset += 1
            if next == 1 { return String(bytes: utf8, encoding: .utf8) }
            guard next == 0xFF else { return nil }
            utf8.append(0)
        }
        return nil
    }

    private static func double(fromOrdered bits: UInt64) -> Double {
        Double(bitPattern: bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits)
    }

    private static func float(fromOrdered bits: UInt32) -> Float {
        Float(bitPattern: bits & (1 << 31) != 0 ? bits & ~(1 << 31) : ~bits)
    }
}
