// The command line of chrono-bench.

/// What to run, parsed from the arguments.
struct BenchmarkOptions {
    static let usage = """
        usage: chrono-bench [--quick] [--json FILE] [--scratch DIR] [--only core|typed|history]
                            [--history-sync durable|deferred] [--cache-mib N] [--repetitions N]
                            [--seed N] [--label TEXT]

          --quick          a tenth of every count (a CI smoke test, under 2 minutes)
          --json FILE      also write the results as JSON to FILE
          --scratch DIR    where the stores go (default: scratch/ in the current directory);
                           keep it on the disk you want to measure, not on a tmpfs
          --only GROUP     run only the core, the typed or the history workloads
          --history-sync M how the history workloads' update transactions commit: durable
                           (vs SQLite FULL, the default) or deferred (vs NORMAL)
          --cache-mib N    page cache of each engine in MiB (default 64, ChronoStore's default)
          --repetitions N  runs of each short workload per engine; medians are reported (default 3)
          --seed N         seed for keys and values (default 20261122)
          --label TEXT     saved with the results and printed above them (say, the commit measured)
        """

    var scale = WorkloadScale.full
    var jsonPath: String?
    var scratchBase = "scratch"
    var runsCore = true
    var runsTyped = true
    var runsHistory = true
    var seed: UInt64 = 20_261_122
    var historySync = SyncMode.durable
    /// The page cache of both engines (ChronoStore's default, 64 MiB).
    var cacheByteCount = 64 << 20
    /// Free text saved with the results, such as the engine commit measured.
    var label: String?
    var showsHelp = false

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        var repetitions: Int?
        func value(after flag: String) throws -> String {
            guard let next = remaining.popFirst() else { throw BenchmarkError.usage("\(flag) needs a value") }
            return next
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick": scale = .quick
            case "--json": jsonPath = try value(after: argument)
            case "--scratch": scratchBase = try value(after: argument)
            case "--only":
                let group = try value(after: argument)
                guard ["core", "typed", "history"].contains(group) else {
                    throw BenchmarkError.usage("--only takes core, typed or history, not \(group)")
                }
                runsCore = group == "core"
                runsTyped = group == "typed"
                runsHistory = group == "history"
            case "--repetitions":
                guard let count = Int(try value(after: argument)), count >= 1 else {
                    throw BenchmarkError.usage("--repetitions takes a positive whole number")
                }
                repetitions = count
            case "--history-sync":
                guard let mode = SyncMode(rawValue: try value(after: argument)) else {
                    throw BenchmarkError.usage("--history-sync takes durable or deferred")
                }
                historySync = mode
            case "--cache-mib":
                guard let mebibytes = Int(try value(after: argument)), mebibytes >= 1 else {
                    throw BenchmarkError.usage("--cache-mib takes a positive whole number")
                }
                cacheByteCount = mebibytes << 20
            case "--label": label = try value(after: argument)
            case "--seed":
                guard let number = UInt64(try value(after: argument)) else {
                    throw BenchmarkError.usage("--seed takes a whole number")
                }
                seed = number
            case "--help", "-h": showsHelp = true
            default: throw BenchmarkError.usage("unknown argument \(argument)")
            }
        }
        if let repetitions { scale.repetitions = repetitions }
    }
}
