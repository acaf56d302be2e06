// Commit times on the command line: ISO-8601 text out, ISO-8601 dates in (for `--at`).
import Foundation

/// Converts between the engine's milliseconds since 1970 and ISO-8601 text in UTC.
enum Timestamp {
    /// `2026-03-01T09:30:00.250Z`: UTC, with milliseconds.
    static func text(milliseconds: Int64) -> String {
        let seconds = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (whole, fraction) = seconds.remainder < 0 ? (seconds.quotient - 1, seconds.remainder + 1000) : seconds
        let base = Date(timeIntervalSince1970: TimeInterval(whole)).formatted(Date.ISO8601FormatStyle())
        let digits = String(fraction)
        return base.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Parses an ISO-8601 date-time (`2026-03-01T09:30:00Z`, with optional fractional seconds
    /// and a time-zone offset) or a date (`2026-03-01`, midnight UTC).
    /// - Returns: milliseconds since 1970, or nil when `text` is not such a date.
    static func milliseconds(_ text: String) -> Int64? {
        let styles = [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()]
        for style in styles {
            if let date = try? style.parse(text) { return milliseconds(date) }
        }
        let isPlainDate = text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") }
        if isPlainDate, let date = try? Date.ISO8601FormatStyle().year().month().day().parse(text) {
            return milliseconds(date)
        }
        return nil
    }

    /// Whole milliseconds at or before `date`. Rounding to microseconds first absorbs the
    /// binary error of a decimal fraction: `.123` s must give 123 ms, not 122.9999….
    private static func milliseconds(_ date: Date) -> Int64 {
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        return Int64((microseconds / 1000).rounded(.down))
    }
}
