// Keys of typed datastores on the command line: decoded to JSON for output, parsed from JSON for get and delete.
import ChronoStore
import ChronoStoreEngine
import Foundation

/// How one collection's keys cross the command line: plain collections use the key's UTF-8
/// text; typed datastores use the JSON form of the identifier (numbers, strings, UUID and
/// ISO-8601 date strings, arrays for tuples), or `{"$hex":"..."}` for bytes no shape explains.
struct KeyForm {
    let kind: TypedCollection

    /// The form of `collection` in the root `reader` sees.
    static func of(_ collection: String, in reader: any CollectionReading) throws -> KeyForm {
        KeyForm(kind: try TypedCollection.kind(of: collection, in: reader))
    }

    var isDatastore: Bool { kind != .plain }

    /// A stored key for output: plain text for plain collections, else JSON text.
    func display(_ key: [UInt8]) -> String {
        guard case .datastore(let shape) = kind else { return StoredValue.key(key) }
        if let value = shape?.decode(key) { return value.jsonText }
        return #"{"$hex":""# + key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + #""}"#
    }

    /// A stored key for `--json` output.
    func json(_ key: [UInt8]) -> JSONValue {
        isDatastore ? .verbatim(display(key)) : .string(StoredValue.key(key))
    }

    /// The stored key a command-line KEY names. In a datastore the argument is JSON of the
    /// identifier's shape; text that is not JSON, or JSON that does not fit the shape, counts as
    /// a string (so `a` and `7` name the string identifiers "a" and "7").
    /// - Throws: a usage failure when the argument does not fit the shape.
    func bytes(_ argument: String) throws -> [UInt8] {
        guard case .datastore(let shape) = kind else { return Array(argument.utf8) }
        let node = (try? JSONReader.parse(argument)) ?? .string(argument, source: "")
        if let hex = node.members?.first(where: { $0.key == "$hex" })?.value.stringValue, let bytes = Self.hexBytes(hex) {
            return bytes
        }
        guard let shape else {
            throw CommandFailure.usage(#"this datastore's identifiers are of an app-defined type: give the key as {"$hex":"..."} as list shows it"#)
        }
        // Text that is JSON of another kind (`7` for a string identifier) is taken as a string too.
        let value = Self.value(node, as: shape) ?? Self.value(.string(argument, source: ""), as: shape)
        guard let value, let bytes = shape.encode(value) else {
            throw CommandFailure.usage("KEY \(argument) is not an identifier of this datastore (\(shape.text))")
        }
        return bytes
    }

    /// A JSON node read as a key value of `shape`, or nil when it does not fit.
    static func value(_ node: JSONNode, as shape: KeyShape) -> KeyValue? {
        switch (shape, node) {
        case (.signed, .scalar(let text)): return Int64(text).map(KeyValue.signed)
        case (.unsigned, .scalar(let text)): return UInt64(text).map(KeyValue.unsigned)
        case (.float, .scalar(let text)), (.double, .scalar(let text)): return Double(text).map(KeyValue.number)
        case (.float, .string(let text, _)), (.double, .string(let text, _)):
            return ["NaN": Double.nan, "Infinity": .infinity, "-Infinity": -.infinity][text].map(KeyValue.number)
        case (.bool, .scalar(let text)): return text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
        case (.string, .string(let text, _)): return .string(text)
        case (.uuid, .string(let text, _)): return UUID(uuidString: text).map(KeyValue.uuid)
        case (.date, .string(let text, _)): return KeyValue.seconds(fromISO: text).map(KeyValue.date)
        case (.date, .scalar(let text)): return Double(text).map(KeyValue.date)
        case (.date, .object(let members)):
            guard case .scalar(let text)? = members.first(where: { $0.key == "sinceReferenceDate" })?.value else { return nil }
            return Double(text).map(KeyValue.date)
        case (.optional, .scalar("null")): return .null
        case (.optional(let wrapped), _): return value(node, as: wrapped)
        case (.tuple(let shapes), .array(let elements)):
            guard shapes.count == elements.count else { return nil }
            var values: [KeyValue] = []
            for (component, element) in zip(shapes, elements) {
                guard let value = value(element, as: component) else { return nil }
                values.append(value)
            }
            return .tuple(values)
        default: return nil
        }
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// Refuses a command-line write into a typed datastore unless `--raw` was given: the tool
    /// cannot encode the app's records or maintain its indexes, and a raw value would be a
    /// record the app cannot decode.
    static func refuseTypedWrite(to collection: String, raw: Bool, in reader: any CollectionReading) throws {
        guard !raw, try of(collection, in: reader).isDatastore else { return }
        throw CommandFailure(
            "\"\(collection)\" is a typed datastore: a JSON value written here is not a record its app can decode; nothing was written (pass --raw to write it anyway)",
            exitCode: .usage)
    }
}
