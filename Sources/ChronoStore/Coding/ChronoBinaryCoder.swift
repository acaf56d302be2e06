// The default value coder: a compact, self-describing binary encoding of Codable values.
import Foundation

/// Encodes and decodes Codable values in ChronoStore's compact binary format.
///
/// Every value carries a one-byte tag and every object its field names, so any stored record can
/// be turned into JSON without its Swift type (``jsonDescription(of:)``); the `chrono` command
/// line tool uses this to print records. `Data`, `Date` and `UUID` have dedicated tags (raw
/// bytes, the `Double` seconds since 2001 a `Date` holds, 16 bytes). Integers are varints, so small
/// numbers take 2 bytes.
///
/// Round trips are exact: every integer width (`Int128` and `UInt128` included), `Float` and `Double` bit for bit (−0, subnormals,
/// infinities, NaN payloads including signalling NaNs), `Date`, `Decimal`, `URL`, `UUID`, `Data`,
/// strings as their exact scalars (no normalization), and class hierarchies encoded through
/// `superEncoder()`. Lost is only what `Codable` itself cannot express (a nested optional holding
/// nil). The Keys and Coding article compares the three coders.
///
/// Thread safety: a stateless value type; `Sendable`. Cost: O(size of the value) both ways.
public struct ChronoBinaryCoder: Sendable {
    /// A coder. It holds no state.
    public init() {}

    /// Encodes `value`.
    /// - Throws: whatever `value`'s `encode(to:)` throws.
    public func encode(_ value: some Encodable) throws -> [UInt8] {
        let box = BinaryEncoderBox()
        try BinaryEncoderImplementation.encode(value, into: box, codingPath: [])
        var bytes: [UInt8] = []
        // Most records are small: one allocation instead of growing from empty.
        bytes.reserveCapacity(128)
        box.write(to: &bytes)
        return bytes
    }

    /// Decodes a `type` from `bytes`.
    /// - Throws: ``ChronoStoreError/malformedRecord(reason:)`` for bytes that are not a binary
    ///   record, or a `DecodingError` when the record does not fit `type`.
    public func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        try decode(type, from: bytes, at: 0)
    }

    /// Decodes from `bytes` starting at `start` (a record after its envelope), without copying.
    func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8], at start: Int) throws -> Value {
        let value = try Self.parse(bytes, from: start)
        return try BinaryDecoderImplementation.decode(type, from: value, codingPath: [])
    }

    /// Renders a binary record as JSON text, without knowing its Swift type.
    ///
    /// Objects keep their field order; `Data` becomes a base64 string, `Date` an ISO 8601 string,
    /// `UUID` its usual string, and non-finite numbers the strings `"NaN"`, `"Infinity"` and
    /// `"-Infinity"`.
    /// - Throws: ``ChronoStoreError/malformedRecord(reason:)`` when `bytes` is not a binary record.
    public static func jsonDescription(of bytes: [UInt8]) throws -> String {
        var text = ""
        JSONRendering.render(try parse(bytes), into: &text)
        return text
    }

    static func parse(_ bytes: [UInt8], from start: Int = 0) throws -> BinaryValue {
        var reader = BinaryValueReader(bytes, offset: start)
        let value = try reader.readValue()
        guard reader.offset == bytes.count else {
            throw ChronoStoreError.malformedRecord(reason: "\(bytes.count - reader.offset) extra bytes after the value")
        }
        return value
    }
}

/// Writes a ``BinaryValue`` as JSON text.
package enum JSONRendering {
    static func render(_ value: BinaryValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .signed(let number): text += String(number)
        case .unsigned(let number): text += String(number)
        case .double(let number): renderNumber(number, into: &text)
        case .float(let number): renderNumber(Double(number), into: &text)
        case .string(let string): renderString(string, into: &text)
        case .bytes(let bytes): renderString(Data(bytes).base64EncodedString(), into: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                render(element, into: &text)
            }
            text += "]"
        case .object(let fields):
            text += "{"
            for (index, (key, field)) in fields.enumerated() {
                if index > 0 { text += "," }
                renderString(key, into: &text)
                text += ":"
                render(field, into: &text)
            }
            text += "}"
        case .date(let seconds): renderDate(Date(timeIntervalSinceReferenceDate: seconds), into: &text)
        case .legacyDate(let seconds): renderDate(Date(timeIntervalSince1970: seconds), into: &text)
        case .wideSigned, .wideUnsigned: text += value.wideDecimal ?? "0"
        case .uuid(let bytes):
            let uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            renderString(uuid.uuidString, into: &text)
        }
    }

    static func renderDate(_ date: Date, into text: inout String) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        renderString(formatter.string(from: date), into: &text)
    }

    static func renderNumber(_ number: Double, into text: inout String) {
        if number.isNaN {
            text += "\"NaN\""
        } else if number.isInfinite {
            text += number < 0 ? "\"-Infinity\"" : "\"Infinity\""
        } else if number == number.rounded(), abs(number) < 1e15 {
            text += String(Int64(number))
        } else {
            text += "\(number)"
        }
    }

    /// Writes `string` as a JSON string literal (also used by the `chrono` tool's JSON output).
    package static func renderString(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
