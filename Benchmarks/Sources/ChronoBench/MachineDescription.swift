// What the benchmark ran on: CPU, core count, kernel, and the file system holding the stores.

import Foundation

/// The machine, as far as /proc and statvfs tell it. Fields are empty where unknown.
struct MachineDescription: Codable, Sendable {
    var cpuModel: String
    var logicalCores: Int
    var memoryGiB: Double
    var kernel: String
    /// Device and file system type of the mount holding the scratch directory.
    var scratchDevice: String
    var scratchFileSystem: String
    var scratchFreeGiB: Double

    static func describe(scratch: String) -> MachineDescription {
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let kernel = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let mount = mountHolding(scratch)
        var freeGiB = 0.0
        if let attributes = try? FileManager.default.attributesOfFileSystem(forPath: scratch),
            let free = attributes[.systemFreeSize] as? NSNumber
        {
            freeGiB = free.doubleValue / Double(1 << 30)
        }
        return MachineDescription(
            cpuModel: model, logicalCores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30), kernel: kernel,
            scratchDevice: mount.device, scratchFileSystem: mount.type, scratchFreeGiB: freeGiB)
    }

    /// The 1-minute load average from /proc/loadavg, or nil where it cannot be read.
    static func loadAverage() -> Double? {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Double($0) }
    }

    /// The /proc/mounts entry with the longest mount point that is a prefix of `path`.
    private static func mountHolding(_ path: String) -> (device: String, type: String) {
        let text = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        var best: (point: String, device: String, type: String) = ("", "", "")
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1])
            let contains = path == point || path.hasPrefix(point == "/" ? "/" : point + "/")
            if contains && point.count >= best.point.count {
                best = (point, String(fields[0]), String(fields[2]))
            }
        }
        return (best.device, best.type)
    }
}
