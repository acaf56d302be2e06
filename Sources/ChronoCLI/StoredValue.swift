// How values cross the command line: JSON text in, compact UTF-8 JSON stored, JSON back out.
import ChronoStore
import Foundation

/// Values are JSON documents. `put` and `apply` store the document's compact text as UTF-8, so
/// `get` prints a document equal to the one given (numbers and escapes exactly as written).
enum StoredValue {
    /// The bytes to store for the JSON text a user gave.
    /// - Throws: a usage failure naming where the text stops being JSON.
    static func bytes(forJSON text: String) throws -> [UInt8] {
        do {
            return Array(try JSONReader.parse(text).compactText.utf8)
        } catch let error as JSONSyntaxError {
            throw CommandFailure.usage("the value is not JSON: \(error)")
        }
    }

    /// A stored value as a JSON document for output.
    ///
    /// Records written through the typed `ChronoStore` API print as
    /// `{"version":N,"value":...}`, decoded without their Swift type (the binary coder describes
    /// itself). Other values that are not UTF-8 JSON print as `{"$base64": "..."}`, so output
    /// stays valid JSON whatever the store holds.
    static func document(_ bytes: [UInt8]) -> JSONValue {
        if let text = String(bytes: bytes, encoding: .utf8), let node = try? JSONReader.parse(text) {
            return .verbatim(node.compactText)
        }
        if let text = try? RecordEnvelope.jsonDescription(of: bytes), let node = try? JSONReader.parse(text) {
            return .verbatim(node.compactText)
        }
        return .object([("$base64", .string(Data(bytes).base64EncodedString()))])
    }

    /// A stored key as text (keys are UTF-8; other bytes show as U+FFFD).
    static func key(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// A key for plain `KEY<TAB>JSON` lines: a backslash, tab, newline or carriage return is
    /// escaped (`\\`, `\t`, `\n`, `\r`), so every line splits at its first tab into one key and
    /// one value. `--json` output needs no escaping of its own.
    static func plainKey(_ key: String) -> String {
        var escaped = ""
        for character in key.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
