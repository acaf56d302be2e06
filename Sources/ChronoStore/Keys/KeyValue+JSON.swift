// Identifiers as JSON text: how `chrono` shows typed keys and how typed errors name records.
import Foundation

extension KeyValue {
    /// The value as compact JSON: numbers, `true`/`false`, strings, UUIDs as their text, `null`,
    /// tuples as arrays. A date is its ISO-8601 text when that text reads back to the same
    /// instant (to the bit), else `{"date":ISO-8601,"sinceReferenceDate":SECONDS}` whose number
    /// is exact. Non-finite numbers are the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
    package var jsonText: String {
        var text = ""
        write(into: &text)
        return text
    }

    private func write(into text: inout String) {
        switch self {
        case .signed(let number): text += String(number)
        case .unsigned(let number): text += String(number)
        case .number(let number):
            if number.isFinite { text += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)" }
            else { JSONRendering.renderNumber(number, into: &text) }
        case .bool(let flag): text += flag ? "true" : "false"
        case .string(let string): JSONRendering.renderString(string, into: &text)
        case .uuid(let id): JSONRendering.renderString(id.uuidString, into: &text)
        case .null: text += "null"
        case .date(let seconds):
            let iso = Self.isoText(seconds)
            if Self.seconds(fromISO: iso)?.bitPattern == seconds.bitPattern {
                JSONRendering.renderString(iso, into: &text)
            } else {
                text += "{\"date\":"
                JSONRendering.renderString(iso, into: &text)
                text += ",\"sinceReferenceDate\":\(seconds)}"
            }
        case .tuple(let components):
            text += "["
            for (index, component) in components.enumerated() {
                if index > 0 { text += "," }
                component.write(into: &text)
            }
            text += "]"
        }
    }

    /// ISO-8601 text in UTC with milliseconds.
    package static func isoText(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
    }

    /// Seconds since 2001 for ISO-8601 text, with or without fractional seconds; nil if it is not a date.
    package static func seconds(fromISO text: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date.timeIntervalSinceReferenceDate }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)?.timeIntervalSinceReferenceDate
    }
}

extension DatastoreFormat {
    /// An encoded identifier as readable text for messages: its JSON form when the identifier
    /// type is built from the standard key types, else the bytes in hex (`0x...`).
    static func describe(key: [UInt8]) -> String {
        if let value = KeyShape.of(Identifier.self)?.decode(key) { return value.jsonText }
        return "0x" + key.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
