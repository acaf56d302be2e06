// JSON documents `chrono` prints: built in field order, serialized compactly on one line.
import ChronoStore
import ChronoStoreEngine

/// A JSON document to print. Objects keep the order their fields were given in, so output
/// reads the same way every time.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// JSON text that is already valid and compact, such as a stored value.
    case verbatim(String)

    /// A root id.
    static func id(_ id: TransactionID) -> JSONValue { .integer(Int64(clamping: id.rawValue)) }

    /// A count or size.
    static func count(_ value: some BinaryInteger) -> JSONValue { .integer(Int64(clamping: value)) }

    /// An optional string: `null` when absent.
    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// The document as compact JSON text on one line.
    func serialized() -> String {
        var output = ""
        write(into: &output)
        return output
    }

    private func write(into output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .string(let value): Self.writeString(value, into: &output)
        case .verbatim(let text): output += text
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(into: &output)
            }
            output += "]"
        case .object(let fields):
            output += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, into: &output)
                output += ":"
                value.write(into: &output)
            }
            output += "}"
        }
    }

    /// Writes `value` as a JSON string literal, escaping quotes, backslashes and control characters.
    static func writeString(_ value: String, into output: inout String) {
        JSONRendering.renderString(value, into: &output)
    }
}
