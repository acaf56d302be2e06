// Encoding Encodable values into the self-describing binary format.
import Foundation

/// Holds what one value encodes to until the whole record is written. Containers are boxes so
/// nested containers can be filled after they are handed out, as `Encoder` requires.
final class BinaryEncoderBox {
    enum Content {
        case empty
        case single(BinaryValue)
        case object(ObjectBox)
        case array(ArrayBox)
    }
    var content: Content = .empty

    /// Writes the value in the binary format (an empty box is an empty object), straight from
    /// the boxes, without a ``BinaryValue`` tree in between.
    func write(to bytes: inout [UInt8]) {
        switch content {
        case .empty:
            bytes.append(10)
            BinaryValue.writeVarint(0, to: &bytes)
        case .single(let value): value.write(to: &bytes)
        case .object(let box):
            bytes.append(10)
            BinaryValue.writeVarint(UInt64(box.fields.count), to: &bytes)
            for (key, field) in box.fields {
                BinaryValue.writeString(key, to: &bytes)
                field.write(to: &bytes)
            }
        case .array(let box):
            bytes.append(9)
            BinaryValue.writeVarint(UInt64(box.elements.count), to: &bytes)
            for element in box.elements { element.write(to: &bytes) }
        }
    }
}

final class ObjectBox {
    var fields: [(String, BinaryEncoderBox)] = []
}

final class ArrayBox {
    var elements: [BinaryEncoderBox] = []
}

struct BinaryEncoderImplementation: Encoder {
    let box: BinaryEncoderBox
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: ObjectBox
        if case .object(let existing) = box.content {
            object = existing
        } else {
            object = ObjectBox()
            box.content = .object(object)
        }
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayBox
        if case .array(let existing) = box.content {
            array = existing
        } else {
            array = ArrayBox()
            box.content = .array(array)
        }
        return BinaryUnkeyedEncoder(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleEncoder(box: box, codingPath: codingPath)
    }

    /// Encodes `value`, giving Data, Date and UUID their own tags.
    /// Metatype comparisons first: they are much cheaper than casting every value.
    /// The coding path is built only for a value that encodes through a nested encoder.
    static func encode<Value: Encodable>(
        _ value: Value, into box: BinaryEncoderBox, codingPath: @autoclosure () -> [any CodingKey]
    ) throws {
        if Value.self == Data.self, let data = value as? Data {
            box.content = .single(.bytes([UInt8](data)))
        } else if Value.self == Date.self, let date = value as? Date {
            box.content = .single(.date(date.timeIntervalSinceReferenceDate))
        } else if Value.self == UUID.self, let uuid = value as? UUID {
            box.content = .single(.uuid(uuid.orderedKeyBytes))
        } else {
            try value.encode(to: BinaryEncoderImplementation(box: box, codingPath: codingPath()))
        }
    }
}

struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectBox
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> BinaryEncoderBox { child(named: key.stringValue) }

    /// The box for field `name`, replacing any earlier value of that field.
    private func child(named name: String) -> BinaryEncoderBox {
        let box = BinaryEncoderBox()
        if let index = object.fields.firstIndex(where: { $0.0 == name }) {
            object.fields[index].1 = box
        } else {
            object.fields.append((name, box))
        }
        return box
    }

    private func put(_ value: BinaryValue, _ key: Key) { child(key).content = .single(value) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.signed(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.signed(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.unsigned(UInt64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(.unsigned(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try BinaryEncoderImplementation.encode(value, into: child(key), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        BinaryEncoderImplementation(box: child(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        BinaryEncoderImplementation(box: child(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    /// An encoder for the superclass, stored in the field `"super"` (as Foundation's coders do),
    /// whether or not `Key` has such a case.
    mutating func superEncoder() -> any Encoder {
        BinaryEncoderImplementation(box: child(named: SuperKey.name), codingPath: codingPath + [SuperKey()])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        BinaryEncoderImplementation(box: child(key), codingPath: codingPath + [key])
    }
}

/// The key under which `superEncoder()` and `superDecoder()` store the superclass's fields.
struct SuperKey: CodingKey {
    static let name = "super"
    var stringValue: String { Self.name }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { guard stringValue == Self.name else { return nil } }
    init?(intValue: Int) { nil }
}

struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let array: ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    private func child() -> BinaryEncoderBox {
        let box = BinaryEncoderBox()
        array.elements.append(box)
        return box
    }

    private func put(_ value: BinaryValue) { child().content = .single(value) }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.float(value)) }
    mutating func encode(_ value: Int) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.signed(value)) }
    mutating func encode(_ value: UInt) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { put(.unsigned(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try BinaryEncoderImplementation.encode(value, into: child(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        BinaryEncoderImplementation(box: child(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        BinaryEncoderImplementation(box: child(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { BinaryEncoderImplementation(box: child(), codingPath: codingPath) }
}

struct BinarySingleEncoder: SingleValueEncodingContainer {
    let box: BinaryEncoderBox
    let codingPath: [any CodingKey]

    private func put(_ value: BinaryValue) { box.content = .single(value) }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(.float(value)) }
    mutating func encode(_ value: Int) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int8) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int16) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int32) throws { put(.signed(Int64(value))) }
    mutating func encode(_ value: Int64) throws { put(.signed(value)) }
    mutating func encode(_ value: UInt) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { put(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { put(.unsigned(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try BinaryEncoderImplementation.encode(value, into: box, codingPath: codingPath)
    }
}

// MARK: - 128-bit integers

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinaryKeyedEncoder {
    mutating func encode(_ value: Int128, forKey key: Key) throws { put(.integer(value), key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { put(.integer(value), key) }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinaryUnkeyedEncoder {
    mutating func encode(_ value: Int128) throws { put(.integer(value)) }
    mutating func encode(_ value: UInt128) throws { put(.integer(value)) }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension BinarySingleEncoder {
    mutating func encode(_ value: Int128) throws { put(.integer(value)) }
    mutating func encode(_ value: UInt128) throws { put(.integer(value)) }
}
