// The command line of chrono-bench.

/// What to run, parsed from the arguments.
struct BenchmarkOptions {
    static let usage = """
        usage: chrono-bench [--quick] [--json FILE] [--scratch DIR] [--only core|typed|history]
                            [--repetitions N] [--seed N]

          --quick          a tenth of every count (a CI smoke test, under 2 minutes)
          --json FILE      also write the results as JSON to FILE
          --scratch DIR    where the stores go (default: scratch/ in the current directory);
                           keep it on the disk you want to measure, not on a tmpfs
          --only GROUP     run only the core, the typed or the history workloads
          --repetitions N  runs of each short workload per engine; medians are reported (default 3)
          --seed N         seed for keys and values (default 20261122)
        """

    var scale = WorkloadScale.full
    var jsonPath: String?
    var scratchBase = "scratch"
    var runsCore = true
    var runsTyped = true
    var runsHistory = true
    var seed: UInt64 = 20_261_122
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
