// How a datastore turns its instances into stored bytes: binary (default), JSON or property list.
import Foundation

/// The encoding a datastore uses for its records.
///
/// Each stored record starts with a small envelope naming its coder and its format version, so a
/// store can hold records written with different coders and versions, and tools can print any
/// record (``RecordEnvelope/jsonDescription(of:)``). Changing a format's coder affects only
/// records written afterwards.
public enum ValueCoder: Sendable, Equatable {
    /// ``ChronoBinaryCoder``: compact, fast and self-describing. The default.
    case binary
    /// Foundation's `JSONEncoder`/`JSONDecoder` with default strategies; keys sorted.
    case json
    /// Foundation's binary property list coder.
    case propertyList

    var tag: UInt8 {
        switch self {
        case .binary: 1
        case .json: 2
        case .propertyList: 3
        }
    }

    init?(tag: UInt8) {
        switch tag {
        case 1: self = .binary
        case 2: self = .json
        case 3: self = .propertyList
        default: return nil
        }
    }

    /// Encodes `value` with this coder (without the envelope).
    public func encode(_ value: some Encodable) throws -> [UInt8] {
        switch self {
        case .binary: return try ChronoBinaryCoder().encode(value)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return [UInt8](try encoder.encode(value))
        case .propertyList:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return [UInt8](try encoder.encode(value))
        }
    }

    /// Decodes a `type` from bytes this coder wrote (without the envelope).
    public func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        switch self {
        case .binary: return try ChronoBinaryCoder().decode(type, from: bytes)
        case .json: return try JSONDecoder().decode(type, from: Data(bytes))
        case .propertyList: return try PropertyListDecoder().decode(type, from: Data(bytes))
        }
    }
}

/// The header in front of every stored record: coder tag (1 byte) and format version (varint).
public enum RecordEnvelope {
    static func wrap(_ payload: [UInt8], coder: ValueCoder, version: Int) -> [UInt8] {
        var bytes: [UInt8] = [coder.tag]
        BinaryValue.writeVarint(UInt64(max(version, 0)), to: &bytes)
        bytes.append(contentsOf: payload)
        return bytes
    }

    static func unwrap(_ bytes: [UInt8]) throws -> (coder: ValueCoder, version: Int, payload: [UInt8]) {
        let (coder, version, start) = try header(bytes)
        return (coder, version, Array(bytes[start...]))
    }

    /// The coder, version and payload offset of a stored record.
    static func header(_ bytes: [UInt8]) throws -> (coder: ValueCoder, version: Int, payloadStart: Int) {
        var reader = BinaryValueReader(bytes)
        let tag = try reader.readByte()
        guard let coder = ValueCoder(tag: tag) else {
            throw ChronoStoreError.malformedRecord(reason: "unknown coder tag \(tag)")
        }
        let version = try reader.readVarint()
        guard version <= UInt64(Int.max) else { throw ChronoStoreError.malformedRecord(reason: "version out of range") }
        return (coder, Int(version), reader.offset)
    }

    /// Renders any stored record as JSON without its Swift type: `{"version":N,"value":...}`.
    ///
    /// Binary and JSON records render fully; property-list records render through Foundation's
    /// `JSONSerialization` when their contents are JSON-compatible.
    /// - Throws: ``ChronoStoreError/malformedRecord(reason:)`` for bytes that are not a record.
    public static func jsonDescription(of bytes: [UInt8]) throws -> String {
        let (coder, version, payload) = try unwrap(bytes)
        let value: String
        switch coder {
        case .binary: value = try ChronoBinaryCoder.jsonDescription(of: payload)
        case .json: value = String(decoding: payload, as: UTF8.self)
        case .propertyList:
            let object = try PropertyListSerialization.propertyList(from: Data(payload), format: nil)
            guard JSONSerialization.isValidJSONObject(object) else {
                throw ChronoStoreError.malformedRecord(reason: "this property list has no JSON form")
            }
            value = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        return "{\"version\":\(version),\"value\":\(value)}"
    }
}
