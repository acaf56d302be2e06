// Decoding Decodable values from the self-describing binary format.
import Foundation

struct BinaryDecoderImplementation: Decoder {
    let value: BinaryValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let fields) = value else { throw mismatch("an object") }
        return KeyedDecodingContainer(BinaryKeyedDecoder<Key>(fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch("an array") }
        return BinaryUnkeyedDecoder(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleDecoder(value: value, codingPath: codingPath)
    }

    func mismatch(_ expected: String) -> DecodingError {
        Self.mismatch(expected, found: value, codingPath: self.codingPath)
    }

    static func mismatch(_ expected: String, found: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) -> DecodingError {
        .typeMismatch(
            Any.self, DecodingError.Context(codingPath: codingPath(), debugDescription: "expected \(expected), found \(found.kindName)"))
    }

    /// Decodes `type` from `value`, reading the dedicated Data, Date and UUID tags.
    /// Metatype comparisons, as the encoder does: a dynamic cast of the type (`is Date.Type`) cost
    /// about a thousand instructions a field, paid by every field that is none of the three.
    static func decode<T: Decodable>(_ type: T.Type, from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        if T.self == Date.self {
            switch value {
            case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds) as! T
            case .legacyDate(let seconds): return Date(timeIntervalSince1970: seconds) as! T
            default: break
            }
        } else if T.self == Data.self {
            if case .bytes(let bytes) = value { return Data(bytes) as! T }
        } else if T.self == UUID.self {
            if case .uuid(let bytes) = value, bytes.count == 16 {
                let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
                return uuid as! T
            }
        }
        return try T(from: BinaryDecoderImplementation(value: value, codingPath: codingPath()))
    }

    /// A generic `T` read from `value`: an integer type through ``integer(_:from:codingPath:)``
    /// (range-checked), anything else through ``decode(_:from:codingPath:)``. The standard types
    /// with tags of their own are recognized by metatype first, so only other types pay the
    /// dynamic cast that finds integer types reached through generic code.
    static func generic<T: Decodable>(_ type: T.Type, from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        if T.self != Date.self, T.self != Data.self, T.self != UUID.self, T.self != String.self,
            let integerType = type as? any FixedWidthInteger.Type
        {
            return try integer(integerType, from: value, codingPath: codingPath()) as! T
        }
        return try decode(type, from: value, codingPath: codingPath())
    }

    /// Scalar conversions shared by the three containers, checking ranges instead of trapping.
    static func integer<T: FixedWidthInteger>(_ type: T.Type, from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> T {
        let converted: T?
        switch value {
        case .signed(let number): converted = T(exactly: number)
        case .unsigned(let number): converted = T(exactly: number)
        case .wideSigned(let high, let low):
            converted = BinaryValue.wide(T.self, negative: high < 0, high: UInt64(bitPattern: high), low: low)
        case .wideUnsigned(let high, let low): converted = BinaryValue.wide(T.self, negative: false, high: high, low: low)
        default: throw mismatch("an integer", found: value, codingPath: codingPath())
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath(), debugDescription: "\(value) does not fit in \(T.self)"))
        }
        return converted
    }

    static func double(from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .float(let number): return Double(number)
        case .signed(let number): return Double(number)
        case .unsigned(let number): return Double(number)
        default: throw mismatch("a number", found: value, codingPath: codingPath())
        }
    }

    /// A `Float` read from its own bit pattern, so signalling NaNs and payloads survive. A `Double`
    /// or integer (a field whose type changed) is rounded to the nearest `Float`, as
    /// `JSONDecoder` does, but one beyond `Float`'s range is an error rather than an infinity.
    static func float(from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        if case .float(let number) = value { return number }
        let wide = try double(from: value, codingPath: codingPath())
        let narrow = Float(wide)
        guard narrow.isFinite || !wide.isFinite else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: codingPath(), debugDescription: "\(wide) does not fit in Float"))
        }
        return narrow
    }

    static func bool(from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch("a Bool", found: value, codingPath: codingPath()) }
        return flag
    }

    static func string(from value: BinaryValue, codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch("a string", found: value, codingPath: codingPath()) }
        return text
    }
}

extension BinaryValue {
    var kindName: String {
        switch self {
        case .null: "nil"
        case .bool: "a Bool"
        case .signed, .unsigned, .wideSigned, .wideUnsigned: "an integer"
        case .double, .float: "a floating-point number"
        case .string: "a string"
        case .bytes: "bytes"
        case .array: "an array"
        case .object: "an object"
        case .date, .legacyDate: "a date"
        case .uuid: "a UUID"
        }
    }
}

struct BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [(String, BinaryValue)]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.compactMap { Key(stringValue: $0.0) } }
    func contains(_ key: Key) -> Bool {
        let name = key.stringValue
        return fields.contains { $0.0 == name }
    }

    private func field(_ key: Key) throws -> BinaryValue {
        let name = key.stringValue
        guard let found = fields.first(where: { $0.0 == name }) else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: "no field \"\(key.stringValue)\""))
        }
        return found.1
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try field(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try BinaryDecoderImplementation.bool(from: field(key), codingPath: path(key))
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try BinaryDecoderImplementation.string(from: field(key), codingPath: path(key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try BinaryDecoderImplementation.double(from: field(key), codingPath: path(key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try BinaryDecoderImplementation.float(from: field(key), codingPath: path(key))
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try BinaryDecoderImplementation.generic(type, from: field(key), codingPath: path(key))
    }
    // Each integer type its own requirement, as the encoder has: without them the standard
    // library's defaults sent every integer field through the generic path and its dynamic cast.
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try BinaryDecoderImplementation.integer(type, from: field(key), codingPath: path(key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try BinaryDecoderImplementation(value: field(key), codingPath: path(key)).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try BinaryDecoderImplementation(value: field(key), codingPath: path(key)).unkeyedContainer()
    }
    /// The decoder for what `superEncoder()` wrote (the field `"super"`), or for nil when the
    /// field is absent, as Foundation's decoders do.
    func superDecoder() throws -> any Decoder {
        let value = fields.first { $0.0 == SuperKey.name }?.1 ?? .null
        return BinaryDecoderImplementation(value: value, codingPath: codingPath + [SuperKey()])
    }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        BinaryDecoderImplementation(value: try field(key), codingPath: path(key))
    }
}

struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let elements: [BinaryValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private struct IndexKey: CodingKey {
        var stringValue: String { "\(intValue!)" }
        var intValue: Int?
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    /// The next element and its index; the index's coding path is built only where it is used
    /// (a nested decoder, or an error): building it for every element cost an array a value.
    private mutating func next() throws -> (BinaryValue, Int) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any.self, DecodingError.Context(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], currentIndex)
    }

    private func path(_ index: Int) -> [any CodingKey] { codingPath + [IndexKey(index)] }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.bool(from: value, codingPath: path(index))
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.string(from: value, codingPath: path(index))
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.double(from: value, codingPath: path(index))
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.float(from: value, codingPath: path(index))
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.generic(type, from: value, codingPath: path(index))
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.integer(type, from: value, codingPath: path(index))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, index) = try next()
        return try BinaryDecoderImplementation(value: value, codingPath: path(index)).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, index) = try next()
        return try BinaryDecoderImplementation(value: value, codingPath: path(index)).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        let (value, index) = try next()
        return BinaryDecoderImplementation(value: value, codingPath: path(index))
    }
}

struct BinarySingleDecoder: SingleValueDecodingContainer {
    let value: BinaryValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try BinaryDecoderImplementation.bool(from: value, codingPath: codingPath) }
    func decode(_ type: String.Type) throws -> String {
        try BinaryDecoderImplementation.string(from: value, codingPath: codingPath)
    }
    func decode(_ type: Double.Type) throws -> Double {
        try BinaryDecoderImplementation.double(from: value, codingPath: codingPath)
    }
    func decode(_ type: Float.Type) throws -> Float {
        try BinaryDecoderImplementation.float(from: value, codingPath: codingPath)
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try BinaryDecoderImplementation.generic(type, from: value, codingPath: codingPath)
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try BinaryDecoderImplementation.integer(type, from: value, codingPath: codingPath)
    }
}

// MARK: - 128-bit integers

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinaryKeyedDecoder {
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try BinaryDecoderImplementation.integer(type, from: field(key), codingPath: path(key))
    }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try BinaryDecoderImplementation.integer(type, from: field(key), codingPath: path(key))
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinaryUnkeyedDecoder {
    mutating func decode(_ type: Int128.Type) throws -> Int128 {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.integer(type, from: value, codingPath: path(index))
    }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 {
        let (value, index) = try next()
        return try BinaryDecoderImplementation.integer(type, from: value, codingPath: path(index))
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinarySingleDecoder {
    func decode(_ type: Int128.Type) throws -> Int128 {
        try BinaryDecoderImplementation.integer(type, from: value, codingPath: codingPath)
    }
    func decode(_ type: UInt128.Type) throws -> UInt128 {
        try BinaryDecoderImplementation.integer(type, from: value, codingPath: codingPath)
    }
}
