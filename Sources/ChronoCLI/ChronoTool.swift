// Running one command line: find the command, parse its arguments, run it, report failure.

/// The `chrono` tool as a function from arguments to an exit code.
enum ChronoTool {
    /// Runs the command line `arguments` (without the program name).
    ///
    /// Results go to stdout. A failure prints one line, `chrono: <message>`, on stderr (then the
    /// usage, for a usage error) and returns its exit code.
    static func run(_ arguments: [String]) -> ExitCode {
        let console = Console()
        var command: Command?
        do {
            if arguments == ["--help"] || arguments == ["-h"] {
                console.print(HelpText.overview)
                try console.flush()
                return .success
            }
            let (resolved, rest) = try CommandTable.resolve(arguments)
            command = resolved
            if asksForHelp(rest) {
                console.print(HelpText.detailed(resolved))
            } else {
                let parsed = try ArgumentParser.parse(rest, positionals: resolved.positionals, options: resolved.options)
                console.prefersJSON = parsed.flags.contains("json")
                try resolved.run(Invocation(command: resolved, arguments: parsed, console: console))
            }
            try console.flush()
            return .success
        } catch {
            try? console.flush()
            let failure = CommandFailure(error)
            console.printError("chrono: " + failure.message)
            if failure.showsUsage { console.printError(HelpText.usage(for: command, arguments: arguments)) }
            return failure.exitCode
        }
    }

    /// Whether `--help` or `-h` comes before any `--`.
    private static func asksForHelp(_ words: [String]) -> Bool {
        words.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
    }
}
