// A command: its name, arguments, options, help text and what it runs.

/// One `chrono` command, such as `put` or `snapshot create`.
struct Command: Sendable {
    /// The words that select it: `put`, or `snapshot create`.
    var name: String
    var positionals: [PositionalSpec]
    var options: [OptionSpec] = []
    /// One line for the command list.
    var summary: String
    /// A paragraph for `chrono help COMMAND`: what it does, what it prints, its exit codes.
    var details: String
    /// Command lines shown under "Examples".
    var examples: [String]
    /// Runs the command; throws a ``CommandFailure`` or an engine error.
    var run: @Sendable (Invocation) throws -> Void

    /// The usage line: `chrono put STORE COLLECTION KEY JSON [--label TEXT]`.
    var synopsis: String {
        (["chrono", name] + positionals.map(\.synopsis) + options.map(\.synopsis)).joined(separator: " ")
    }
}
