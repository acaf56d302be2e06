// Printing a report as plain-text tables: timings, file sizes, memory, machine.

import Foundation

/// Renders columns padded to their widest cell, separated by " | ".
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    func render() -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: " | ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }
}

extension BenchmarkReport {
    /// Everything a person reads: machine, timings, sizes, memory, notes.
    func rendered() -> String {
        var parts: [String] = []
        parts.append(
            """
            chrono-bench (\(scale.name)): \(command)\(label.map { "\nlabel: " + $0 } ?? "")
            machine: \(machine.cpuModel), \(machine.logicalCores) logical cores, \
            \(String(Int(machine.memoryGiB.rounded()))) GiB RAM, kernel \(machine.kernel)
            scratch: \(machine.scratchDevice) (\(machine.scratchFileSystem))
            fsync latency (4 KiB pwrite + fdatasync, \(fsync.sampleCount) samples): \
            median \(Formatting.seconds(fsync.medianMilliseconds / 1000)), \
            p90 \(Formatting.seconds(fsync.p90Milliseconds / 1000)), \
            p99 \(Formatting.seconds(fsync.p99Milliseconds / 1000))\(writeLayout.map { "\n6 pages + 512-byte header at offset 0, overwritten and synced (\($0.sampleCount) samples each): " + $0.summary } ?? "")
            """)
        parts.append(
            "Times are medians; ratio = SQLite time / ChronoStore time (above 1: ChronoStore faster); "
                + "load = 1-minute load average after the workload (\(machine.logicalCores) cores)\n"
                + timingTable().render())
        parts.append("File sizes (ratio = ChronoStore / SQLite; below 1 is smaller)\n" + sizeTable().render())
        parts.append(
            "Memory (RSS in MiB; peak = VmHWM during the phase, reset before it through /proc/self/clear_refs, "
                + "* = not reset: peak of the process so far; both stores stay open throughout)\n"
                + memoryTable().render())
        if !failures.isEmpty {
            parts.append(
                failures.map { "FAILED: \($0.workload), \($0.engine): \($0.message)" }.joined(separator: "\n"))
        }
        if !notes.isEmpty { parts.append(notes.map { "note: " + $0 }.joined(separator: "\n")) }
        return parts.joined(separator: "\n\n")
    }

    private func timingTable() -> TextTable {
        var table = TextTable(header: ["workload", "ChronoStore", "SQLite", "ratio", "target", "runs", "load", "sync"])
        for result in timings {
            let target = result.targetRatio.map {
                "≥ \(Formatting.ratio($0)) " + (result.meetsTarget == true ? "met" : "MISSED")
            }
            table.rows.append([
                result.workload,
                "\(Formatting.seconds(result.chronoStoreSeconds)) (\(Formatting.perOperation(seconds: result.chronoStoreSeconds, count: result.operationCount)))",
                "\(Formatting.seconds(result.sqliteSeconds)) (\(Formatting.perOperation(seconds: result.sqliteSeconds, count: result.operationCount)))",
                Formatting.ratio(result.ratio), target ?? "", "\(result.runCount)",
                result.loadAverage.map { String(format: "%.1f", $0) } ?? "", result.syncComparison ?? "",
            ])
        }
        return table
    }

    private func sizeTable() -> TextTable {
        var table = TextTable(header: ["measurement", "ChronoStore", "SQLite", "ratio", "target", "note"])
        for size in sizes {
            let target = size.targetRatio.map { limit in
                "≤ \(Formatting.ratio(limit)) " + ((size.ratio ?? .infinity) <= limit ? "met" : "MISSED")
            }
            table.rows.append([
                size.measurement, size.chronoStoreBytes.map(Formatting.bytes) ?? "n/a",
                size.sqliteBytes.map(Formatting.bytes) ?? "n/a", size.ratio.map(Formatting.ratio) ?? "",
                target ?? "", size.note ?? "",
            ])
        }
        return table
    }

    private func memoryTable() -> TextTable {
        var table = TextTable(header: ["phase", "RSS before", "peak", "growth", "RSS after"])
        for sample in memory {
            table.rows.append([
                sample.phase, Formatting.mebibytes(sample.residentBeforeMiB),
                Formatting.mebibytes(sample.peakMiB) + (sample.peakIsPerPhase ? "" : "*"),
                sample.peakIsPerPhase ? Formatting.mebibytes(sample.growthMiB) : "",
                Formatting.mebibytes(sample.residentAfterMiB),
            ])
        }
        return table
    }
}
