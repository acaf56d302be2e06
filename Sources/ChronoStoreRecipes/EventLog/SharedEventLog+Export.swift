// Exporting a shared event log as JSON or CSV, oldest first.
public import Foundation

extension SharedEventLog {
    /// Every event, oldest first, as a JSON array of `{"id","date","source","payload"}` with
    /// ISO-8601 dates (to the millisecond) and sorted keys.
    public func exportJSON() async throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.isoText(date))
        }
        return try encoder.encode(Array(try await events().reversed()))
    }

    /// Every event, oldest first, as CSV (RFC 4180): a header `id,date,source,payload`, then one
    /// line per event. A payload that encodes as a JSON string is its text; any other payload is
    /// its compact JSON. Cells with a comma, quote or line break are quoted.
    public func exportCSV() async throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lines = ["id,date,source,payload"]
        for event in try await events().reversed() {
            let json = String(decoding: try encoder.encode(event.payload), as: UTF8.self)
            let payload = (try? JSONDecoder().decode(String.self, from: Data(json.utf8))) ?? json
            lines.append([event.id.uuidString, Self.isoText(event.date), event.source, payload].map(Self.csvCell).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func isoText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func csvCell(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
