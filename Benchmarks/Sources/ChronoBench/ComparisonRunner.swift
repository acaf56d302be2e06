// Runs each workload on both engines in turn and records times, sizes and memory.

/// Takes turns between the engines: run 1 is ChronoStore then SQLite, run 2 SQLite then
/// ChronoStore, and so on, so neither engine always runs on a warmer (or more crowded) cache.
final class ComparisonRunner {
    private(set) var report: BenchmarkReport

    init(report: BenchmarkReport) {
        self.report = report
    }

    enum Engine { case chronoStore, sqlite }

    /// Times `chronoStore` and `sqlite` `runs` times each and records the medians. Each body
    /// receives the run number (bodies that write use it to pick fresh records) and returns a
    /// tally, or nil when there is nothing to compare; differing tallies stop the benchmark.
    /// `prepare` runs untimed before each body. A body that throws is recorded as a failure and
    /// the call throws ``BenchmarkError/workloadFailed(_:)``.
    func compare(
        _ workload: String, group: String, operationCount: Int, sync: SyncMode? = nil, target: Double? = nil,
        runs: Int = 1, prepare: (Engine, Int) throws -> Void = { _, _ in },
        chronoStore: (Int) throws -> ReadTally?, sqlite: (Int) throws -> ReadTally?
    ) throws {
        var chronoStoreSamples: [Double] = []
        var sqliteSamples: [Double] = []
        for run in 0..<runs {
            var tallies: [ReadTally?] = [nil, nil]
            let order = run % 2 == 0 ? [0, 1] : [1, 0]
            for engine in order {
                try prepare(engine == 0 ? .chronoStore : .sqlite, run)
                let memory = MemoryProbe.begin()
                let (tally, seconds): (ReadTally?, Double)
                do {
                    (tally, seconds) = try Stopwatch.time { try engine == 0 ? chronoStore(run) : sqlite(run) }
                } catch {
                    recordFailure(workload, engine: engine == 0 ? "ChronoStore" : "SQLite", error)
                    throw BenchmarkError.workloadFailed(workload)
                }
                record(MemoryProbe.end("\(workload) / \(engine == 0 ? "ChronoStore" : "SQLite")", memory))
                tallies[engine] = tally
                if engine == 0 { chronoStoreSamples.append(seconds) } else { sqliteSamples.append(seconds) }
            }
            if let first = tallies[0], let second = tallies[1], first != second {
                throw BenchmarkError.resultsDiffer(workload: workload, chronoStore: first.count, sqlite: second.count)
            }
        }
        let result = TimedResult(
            workload: workload, group: group, operationCount: operationCount, syncComparison: sync?.comparison,
            chronoStoreSamples: chronoStoreSamples, sqliteSamples: sqliteSamples, targetRatio: target)
        report.timings.append(result)
        Console.progress(
            "\(workload): ChronoStore \(Formatting.seconds(result.chronoStoreSeconds)), "
                + "SQLite \(Formatting.seconds(result.sqliteSeconds)), ratio \(Formatting.ratio(result.ratio))")
    }

    func recordFailure(_ workload: String, engine: String, _ error: any Error) {
        report.failures.append(WorkloadFailure(workload: workload, engine: engine, message: "\(error)"))
        Console.progress("\(workload): \(engine) FAILED: \(error)")
    }

    func recordSize(_ size: SizeResult) {
        report.sizes.append(size)
        Console.progress(
            "\(size.measurement): ChronoStore \(size.chronoStoreBytes.map(Formatting.bytes) ?? "n/a"), "
                + "SQLite \(size.sqliteBytes.map(Formatting.bytes) ?? "n/a")")
    }

    func note(_ text: String) {
        report.notes.append(text)
    }

    /// Records the RSS now as a phase of its own (set-up steps such as generating records).
    func sampleMemory(_ phase: String) {
        record(MemoryProbe.end(phase, (MemoryProbe.residentMiB(), false)))
    }

    /// Keeps `sample`, replacing an earlier one of the same phase, so a repeated workload keeps
    /// the largest peak over its runs.
    private func record(_ sample: MemorySample) {
        if let index = report.memory.firstIndex(where: { $0.phase == sample.phase }) {
            if sample.growthMiB >= report.memory[index].growthMiB { report.memory[index] = sample }
        } else {
            report.memory.append(sample)
        }
    }
}
