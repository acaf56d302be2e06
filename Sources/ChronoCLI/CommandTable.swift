// The table of commands `chrono` knows, and finding the one a command line names.

/// Every command, in the order help lists them.
enum CommandTable {
    static let all: [Command] = [
        .create, .put, .get, .delete, .list, .apply,
        .history, .undo, .redo, .revert,
        .snapshotCreate, .snapshotList, .snapshotDelete, .snapshotCheckout,
        .backup, .restore,
        .prune, .compact, .verify, .info, .demo, .help,
    ]

    /// Words that group subcommands (`snapshot create`).
    static let groups: Set<String> = ["snapshot"]

    /// The commands whose name starts with `words`: one for `put` or `snapshot create`, a
    /// group's commands for `snapshot`, none for an unknown word.
    static func matching(_ words: [String]) -> [Command] {
        let name = words.joined(separator: " ")
        if let exact = all.first(where: { $0.name == name }) { return [exact] }
        return all.filter { $0.name.hasPrefix(name + " ") }
    }

    /// The command that a command line names and the words after its name.
    /// - Throws: a usage failure for an unknown command or a group without a known subcommand.
    static func resolve(_ arguments: [String]) throws -> (Command, [String]) {
        guard let first = arguments.first else { throw CommandFailure.usage("no command given") }
        if groups.contains(first) {
            let subcommand = arguments.dropFirst().first ?? ""
            guard !subcommand.isEmpty, let command = matching([first, subcommand]).first, command.name.contains(" ") else {
                let choices = matching([first]).map { String($0.name.dropFirst(first.count + 1)) }.joined(separator: ", ")
                throw CommandFailure.usage(
                    subcommand.isEmpty ? "\(first) needs a subcommand: \(choices)" : "unknown \(first) command '\(subcommand)': use \(choices)")
            }
            return (command, Array(arguments.dropFirst(2)))
        }
        guard let command = all.first(where: { $0.name == first }) else {
            throw CommandFailure.usage("unknown command '\(first)'")
        }
        return (command, Array(arguments.dropFirst()))
    }
}
