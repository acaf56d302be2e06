// chrono-bench: runs every workload on ChronoStore and on SQLite, prints the table, writes JSON.

import Foundation

func runBenchmark(_ options: BenchmarkOptions, command: String) throws -> BenchmarkReport {
    // Both engines get the same page cache: ChronoStore's default `cacheByteCount` unless
    // --cache-mib says otherwise.
    let cacheByteCount = options.cacheByteCount
    let scratch = try ScratchDirectory(base: options.scratchBase)
    defer { scratch.remove() }
    Console.progress("scratch directory \(scratch.path)")
    let fsync = try FsyncLatency.measure(in: scratch.path, count: options.scale.fsyncProbeCount)
    Console.progress("fsync latency: median \(Formatting.seconds(fsync.medianMilliseconds / 1000))")
    let layout = try WriteLayoutCost.measure(in: scratch.path, count: options.scale.fsyncProbeCount)
    Console.progress("6 pages + header, synced: \(layout.summary)")
    let report = BenchmarkReport(
        command: command, label: options.label, startedAt: ISO8601DateFormatter().string(from: Date()),
        scale: options.scale,
        machine: .describe(scratch: scratch.path), fsync: fsync, writeLayout: layout)
    let runner = ComparisonRunner(report: report)
    runner.sampleMemory("start")
    runner.note(
        "Both engines use a \(Formatting.bytes(Int64(cacheByteCount))) page cache and 4 KiB pages; SQLite runs in WAL "
            + "mode with a WITHOUT ROWID table and prepared statements from GRDB's statement cache.")
    runner.note(
        "ChronoStore reads through a read-only memory map of its data file (its default; CHRONO_BENCH_MMAP=off for "
            + "pread into its page cache); SQLite's memory map is off (its default, mmap_size 0).")
    runner.note(
        "Core workloads use ChronoStore retention .lastRoots(1) (no history, like SQLite); the history workloads "
            + "use .lastRoots(\(options.scale.retainedRootCount)) and .limitless.")
    runner.note(
        "History update transactions commit \(options.historySync.rawValue) "
            + "(\(options.historySync.comparison)); undo is always durable vs FULL.")
    runner.note("ChronoStore file sizes are the data file only; its lock file adds a constant 4 KiB.")
    runner.note(
        "Typed workloads use the public ChronoStore API (async; each timed body is one task the harness waits for) "
            + "against GRDB Codable records.")
    // A failed workload is recorded in the report; the next group still runs.
    if options.runsCore {
        try continuingAfterFailure {
            try CoreWorkloads(
                scale: options.scale, scratch: scratch, cacheByteCount: cacheByteCount, seed: options.seed
            ).run(runner)
        }
    }
    if options.runsTyped {
        try continuingAfterFailure {
            try TypedWorkloads(
                scale: options.scale, scratch: scratch, cacheByteCount: cacheByteCount, seed: options.seed &+ 50
            ).run(runner)
        }
    }
    if options.runsHistory {
        try HistoryWorkloads(
            scale: options.scale, scratch: scratch, cacheByteCount: cacheByteCount, seed: options.seed &+ 100,
            sync: options.historySync
        ).run(runner)
    }
    return runner.report
}

/// Runs `body`, absorbing ``BenchmarkError/workloadFailed(_:)`` (already in the report).
func continuingAfterFailure(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch BenchmarkError.workloadFailed {
        return
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    let options = try BenchmarkOptions(arguments: arguments)
    if options.showsHelp {
        print(BenchmarkOptions.usage)
        exit(0)
    }
    let report = try runBenchmark(options, command: (["chrono-bench"] + arguments).joined(separator: " "))
    print(report.rendered())
    if let jsonPath = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: jsonPath))
    }
    if !report.failures.isEmpty { exit(1) }
} catch let error as BenchmarkError {
    FileHandle.standardError.write(Data("chrono-bench: \(error)\n".utf8))
    if case .usage = error {
        FileHandle.standardError.write(Data((BenchmarkOptions.usage + "\n").utf8))
        exit(2)
    }
    exit(1)
} catch {
    FileHandle.standardError.write(Data("chrono-bench: \(error)\n".utf8))
    exit(1)
}
