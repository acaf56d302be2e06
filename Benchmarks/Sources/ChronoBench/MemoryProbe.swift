// Resident memory of this process per phase, from /proc/self/status, with the peak reset per phase.

import Foundation

/// Resident memory around one phase: before it, its peak, and after it.
///
/// The peak is `VmHWM`, reset to the current RSS just before the phase by writing `5` to
/// /proc/self/clear_refs (Linux 4.0 and later). Where that reset fails, `peakIsPerPhase` is
/// false and the peak is the process's peak so far. Both engines' stores are open during every
/// phase and the records are generated up front, so the phase's own cost is the growth
/// (`peakMiB - residentBeforeMiB`), not the absolute figure.
struct MemorySample: Codable, Sendable {
    var phase: String
    var residentBeforeMiB: Double
    var peakMiB: Double
    var residentAfterMiB: Double
    var peakIsPerPhase: Bool

    var growthMiB: Double { peakMiB - residentBeforeMiB }
}

enum MemoryProbe {
    /// Starts a phase: resets the peak and remembers the RSS now.
    static func begin() -> (residentMiB: Double, peakWasReset: Bool) {
        let reset = resetPeak()
        return (residentMiB(), reset)
    }

    /// Ends a phase started with ``begin()``.
    static func end(_ phase: String, _ start: (residentMiB: Double, peakWasReset: Bool)) -> MemorySample {
        let fields = statusFields()
        return MemorySample(
            phase: phase, residentBeforeMiB: start.residentMiB, peakMiB: Double(fields["VmHWM"] ?? 0) / 1024,
            residentAfterMiB: Double(fields["VmRSS"] ?? 0) / 1024, peakIsPerPhase: start.peakWasReset)
    }

    static func residentMiB() -> Double {
        Double(statusFields()["VmRSS"] ?? 0) / 1024
    }

    /// Sets `VmHWM` to the current RSS; false where the kernel does not allow it.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    /// The `Vm…` lines of /proc/self/status, in KiB; empty where that file does not exist.
    static func statusFields() -> [String: Int] {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("Vm") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let number = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            fields[String(parts[0])] = number
        }
        return fields
    }
}
