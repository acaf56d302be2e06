// The help command, and the usage and help texts every command prints.

extension Command {
    static let help = Command(
        name: "help", positionals: [.optional("COMMAND"), .optional("SUBCOMMAND")],
        summary: "show the commands, or one command's usage and examples",
        details: "Without COMMAND, lists every command. With one, shows its usage, options and examples.",
        examples: ["chrono help", "chrono help list", "chrono help snapshot", "chrono help backup"],
        run: runHelp)

    private static func runHelp(_ invocation: Invocation) throws {
        let words = ["COMMAND", "SUBCOMMAND"].compactMap(invocation.optionalPositional)
        guard !words.isEmpty else { return invocation.console.print(HelpText.overview) }
        let commands = CommandTable.matching(words)
        guard !commands.isEmpty else { throw CommandFailure.usage("no command named '\(words.joined(separator: " "))'") }
        invocation.console.print(commands.map(HelpText.detailed).joined(separator: "\n\n"))
    }
}

/// The texts `chrono help` prints.
enum HelpText {
    /// `chrono help`: what the tool is, every command, and the rules they share.
    static var overview: String {
        let width = CommandTable.all.map(\.name.count).max() ?? 0
        let lines = CommandTable.all.map { "  " + $0.name + String(repeating: " ", count: width - $0.name.count + 3) + $0.summary }
        return """
            chrono: inspect and edit ChronoStore files, trace and move through their history,
            take snapshots and backups, restore them, and verify them.

            Usage: chrono COMMAND STORE [ARGUMENTS] [OPTIONS]

            Commands:
            \(lines.joined(separator: "\n"))

            Keys are UTF-8 strings; values are JSON documents. Every command accepts --json for
            machine-readable output on stdout; messages and errors go to stderr. A failed command
            prints one line starting "chrono:" and writes nothing to the store.

            Exit codes: 0 success, 1 not found (key, root or snapshot), 2 usage error or bad input
            (including text that is not UTF-8), 3 damaged or truncated data, 4 any other failure
            (missing or locked store, I/O, output that cannot be written, input that cannot be read,
            unsupported format).

            Start with 'chrono demo'. Run 'chrono help COMMAND' for a command's options and examples.
            """
    }

    /// `chrono help COMMAND`: usage, description, options, examples.
    static func detailed(_ command: Command) -> String {
        let options = command.options + ArgumentParser.commonOptions
        let labels = options.map { "--" + $0.name + ($0.valueName.map { " " + $0 } ?? "") }
        let width = labels.map(\.count).max() ?? 0
        let optionLines = zip(labels, options).map { label, option in
            "  " + label + String(repeating: " ", count: width - label.count + 3) + option.summary
        }
        return """
            Usage: \(command.synopsis)

            \(command.details)

            Options:
            \(optionLines.joined(separator: "\n"))

            Examples:
            \(command.examples.map { "  " + $0 }.joined(separator: "\n"))
            """
    }

    /// What a usage error prints after its message: the command's usage, a group's usages
    /// (for `chrono snapshot` without a known subcommand), or the general usage.
    static func usage(for command: Command?, arguments: [String]) -> String {
        if let command {
            return "Usage: \(command.synopsis)\nRun 'chrono help \(command.name)' for details and examples."
        }
        if let group = arguments.first, CommandTable.groups.contains(group) {
            let usages = CommandTable.matching([group]).map(\.synopsis)
            let lines = usages.enumerated().map { index, usage in (index == 0 ? "Usage: " : "       ") + usage }
            return lines.joined(separator: "\n") + "\nRun 'chrono help \(group)' for details and examples."
        }
        return "Usage: chrono COMMAND STORE [ARGUMENTS] [OPTIONS]\nRun 'chrono help' for the commands."
    }
}
