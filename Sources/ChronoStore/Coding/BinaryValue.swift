// The self-describing binary record format: a tagged value tree and its byte layout.

/// One node of a binary-coded record.
///
/// Layout: a tag byte, then the payload. Counts and lengths are LEB128 varints.
///
/// | tag | meaning | payload |
/// |---|---|---|
/// | 0 | nil | none |
/// | 1 | false | none |
/// | 2 | true | none |
/// | 3 | signed integer | zig-zag varint |
/// | 4 | unsigned integer | varint |
/// | 5 | Double | 8 bytes, little-endian IEEE |
/// | 6 | Float | 4 bytes, little-endian IEEE |
/// | 7 | string | varint byte count, UTF-8 |
/// | 8 | bytes (`Data`) | varint byte count, bytes |
/// | 9 | array | varint element count, elements |
/// | 10 | object | varint field count, then per field: varint key length, UTF-8 key, value |
/// | 11 | Date, earlier versions (read only) | 8 bytes, little-endian Double, seconds since 1970 |
/// | 12 | UUID | 16 bytes |
/// | 13 | Date | 8 bytes, little-endian Double, `timeIntervalSinceReferenceDate` (seconds since 2001) |
/// | 14 | `Int128` beyond 64 bits | 16 bytes, little-endian two's complement |
/// | 15 | `UInt128` beyond 64 bits | 16 bytes, little-endian |
///
/// Tag 13 stores the `Double` a `Date` holds, so dates round-trip bit for bit. Tag 11, written by
/// earlier versions, went through seconds since 1970, which rounds; it is still read, and decodes
/// to the same `Date` it always did.
///
/// Because every node names its kind and every object names its keys, a reader that does not
/// know the Swift type can still print the record (see ``ChronoBinaryCoder/jsonDescription(of:)``).
///
/// Not `indirect`: arrays and objects already hold their children in arrays, so no case needs a
/// box of its own, and an indirect enum allocated one for every node of every record coded.
enum BinaryValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case double(Double)
    case float(Float)
    case string(String)
    case bytes([UInt8])
    case array([BinaryValue])
    case object([(String, BinaryValue)])
    /// A `Date` as its `timeIntervalSinceReferenceDate` (tag 13).
    case date(Double)
    /// A `Date` written by earlier versions as seconds since 1970 (tag 11).
    case legacyDate(Double)
    case uuid([UInt8])
    /// A 128-bit signed integer outside Int64's range (tag 14): high and low 64 bits.
    case wideSigned(high: Int64, low: UInt64)
    /// A 128-bit unsigned integer above UInt64.max (tag 15): high and low 64 bits.
    case wideUnsigned(high: UInt64, low: UInt64)

    static func == (lhs: BinaryValue, rhs: BinaryValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.signed(let a), .signed(let b)): return a == b
        case (.unsigned(let a), .unsigned(let b)): return a == b
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): return a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): return a == b
        case (.bytes(let a), .bytes(let b)), (.uuid(let a), .uuid(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.date(let a), .date(let b)), (.legacyDate(let a), .legacyDate(let b)): return a.bitPattern == b.bitPattern
        case (.wideSigned(let a, let b), .wideSigned(let c, let d)): return a == c && b == d
        case (.wideUnsigned(let a, let b), .wideUnsigned(let c, let d)): return a == c && b == d
        default: return false
        }
    }
}

// MARK: - Writing

extension BinaryValue {
    func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(0)
        case .bool(let value): bytes.append(value ? 2 : 1)
        case .signed(let value):
            bytes.append(3)
            Self.writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &bytes)
        case .unsigned(let value):
            bytes.append(4)
            Self.writeVarint(value, to: &bytes)
        case .double(let value):
            bytes.append(5)
            Self.writeLittleEndian(value.bitPattern, to: &bytes)
        case .float(let value):
            bytes.append(6)
            Self.writeLittleEndian(value.bitPattern, to: &bytes)
        case .string(let value):
            bytes.append(7)
            Self.writeString(value, to: &bytes)
        case .bytes(let value):
            bytes.append(8)
            Self.writeVarint(UInt64(value.count), to: &bytes)
            bytes.append(contentsOf: value)
        case .array(let elements):
            bytes.append(9)
            Self.writeVarint(UInt64(elements.count), to: &bytes)
            for element in elements { element.write(to: &bytes) }
        case .object(let fields):
            bytes.append(10)
            Self.writeVarint(UInt64(fields.count), to: &bytes)
            for (key, value) in fields {
                Self.writeString(key, to: &bytes)
                value.write(to: &bytes)
            }
        case .date(let seconds):
            bytes.append(13)
            Self.writeLittleEndian(seconds.bitPattern, to: &bytes)
        case .legacyDate(let seconds):
            bytes.append(11)
            Self.writeLittleEndian(seconds.bitPattern, to: &bytes)
        case .uuid(let value):
            bytes.append(12)
            bytes.append(contentsOf: value)
        case .wideSigned(let high, let low):
            bytes.append(14)
            Self.writeLittleEndian(low, to: &bytes)
            Self.writeLittleEndian(high, to: &bytes)
        case .wideUnsigned(let high, let low):
            bytes.append(15)
            Self.writeLittleEndian(low, to: &bytes)
            Self.writeLittleEndian(high, to: &bytes)
        }
    }

    static func writeVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    static func writeLittleEndian<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        var little = value.littleEndian
        withUnsafeBytes(of: &little) { bytes.append(contentsOf: $0) }
    }

    static func writeString(_ value: String, to bytes: inout [UInt8]) {
        let utf8 = value.utf8
        writeVarint(UInt64(utf8.count), to: &bytes)
        bytes.append(contentsOf: utf8)
    }
}

// MARK: - Reading

/// Reads a ``BinaryValue`` from bytes, rejecting anything malformed with a typed error.
struct BinaryValueReader {
    let bytes: [UInt8]
    var offset: Int
    /// Nesting limit, so hostile input cannot exhaust the stack.
    static let maximumDepth = 256

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func readValue(depth: Int = 0) throws -> BinaryValue {
        guard depth < Self.maximumDepth else { throw malformed("nesting deeper than \(Self.maximumDepth)") }
        let tag = try readByte()
        switch tag {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3:
            let raw = try readVarint()
            return .signed(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
        case 4: return .unsigned(try readVarint())
        case 5: return .double(Double(bitPattern: try readLittleEndian(UInt64.self)))
        case 6: return .float(Float(bitPattern: try readLittleEndian(UInt32.self)))
        case 7: return .string(try readString())
        case 8: return .bytes(try readBytes(try readCount()))
        case 9:
            let count = try readCount()
            var elements: [BinaryValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try readValue(depth: depth + 1)) }
            return .array(elements)
        case 10:
            let count = try readCount()
            var fields: [(String, BinaryValue)] = []
            fields.reserveCapacity(count)
            for _ in 0..<count { fields.append((try readString(), try readValue(depth: depth + 1))) }
            return .object(fields)
        case 11: return .legacyDate(Double(bitPattern: try readLittleEndian(UInt64.self)))
        case 12: return .uuid(try readBytes(16))
        case 13: return .date(Double(bitPattern: try readLittleEndian(UInt64.self)))
        case 14:
            let low = try readLittleEndian(UInt64.self)
            return .wideSigned(high: try readLittleEndian(Int64.self), low: low)
        case 15:
            let low = try readLittleEndian(UInt64.self)
            return .wideUnsigned(high: try readLittleEndian(UInt64.self), low: low)
        default: throw malformed("unknown tag \(tag) at byte \(offset - 1)")
        }
    }

    func malformed(_ reason: String) -> ChronoStoreError { .malformedRecord(reason: reason) }

    mutating func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw malformed("truncated at byte \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw malformed("varint longer than 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A count or length, which cannot exceed the bytes left (every element takes a byte).
    mutating func readCount() throws -> Int {
        let count = try readVarint()
        guard count <= UInt64(bytes.count - offset) else { throw malformed("count \(count) exceeds the record") }
        return Int(count)
    }

    mutating func readBytes(_ count: Int) throws -> [UInt8] {
        guard count <= bytes.count - offset else { throw malformed("truncated at byte \(offset)") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func readLittleEndian<Value: FixedWidthInteger>(_ type: Value.Type) throws -> Value {
        let size = MemoryLayout<Value>.size
        guard size <= bytes.count - offset else { throw malformed("truncated at byte \(offset)") }
        var value = Value.zero
        for index in 0..<size { value |= Value(bytes[offset + index]) << (8 * index) }
        offset += size
        return value
    }

    mutating func readString() throws -> String {
        let count = try readCount()
        let raw = bytes[offset..<(offset + count)]
        offset += count
        let text = String(decoding: raw, as: UTF8.self)
        // Decoding repairs invalid UTF-8 with U+FFFD; a repaired string has different bytes.
        // ASCII (every field name, most values) is valid as it stands: only other text is compared.
        guard Self.isASCII(raw) || text.utf8.elementsEqual(raw) else { throw malformed("a string is not valid UTF-8") }
        return text
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ raw: ArraySlice<UInt8>) -> Bool {
        raw.withUnsafeBytes { buffer in
            var index = 0
            let count = buffer.count
            while count - index >= 8 {
                if buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
            while index < count {
                if buffer[index] >= 0x80 { return false }
                index += 1
            }
            return true
        }
    }
}
