// How times, sizes and ratios are written in the printed tables.

import Foundation

enum Formatting {
    /// Seconds with a unit that keeps three significant figures: "1.23 s", "45.6 ms", "789 µs".
    static func seconds(_ value: Double) -> String {
        if value >= 1 { return String(format: "%.2f s", value) }
        if value >= 1e-3 { return String(format: "%.1f ms", value * 1e3) }
        return String(format: "%.0f µs", value * 1e6)
    }

    static func bytes(_ value: Int64) -> String {
        let mebibytes = Double(value) / Double(1 << 20)
        return mebibytes >= 1 ? String(format: "%.1f MiB", mebibytes) : String(format: "%.0f KiB", Double(value) / 1024)
    }

    static func ratio(_ value: Double) -> String {
        String(format: "%.2fx", value)
    }

    static func mebibytes(_ value: Double) -> String {
        String(format: "%.0f MiB", value)
    }

    /// Microseconds per operation, or operations per second when that reads better.
    static func perOperation(seconds: Double, count: Int) -> String {
        guard count > 0 else { return "" }
        let micros = seconds / Double(count) * 1e6
        return micros >= 1000 ? String(format: "%.2f ms/op", micros / 1000) : String(format: "%.2f µs/op", micros)
    }
}

/// Progress lines go to standard error so standard output holds only the tables.
enum Console {
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data(("  " + line + "\n").utf8))
    }
}
