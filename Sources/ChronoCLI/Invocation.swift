// One run of a command: its parsed arguments, the console, and typed accessors for values.
import ChronoStoreEngine

/// What a command's `run` receives.
struct Invocation {
    let command: Command
    let arguments: ParsedArguments
    let console: Console

    /// Whether `--json` was given.
    var prefersJSON: Bool { console.prefersJSON }

    /// The value of a positional argument the command declares as required.
    func positional(_ name: String) -> String {
        guard let value = arguments.positionals[name] else {
            preconditionFailure("\(command.name) reads undeclared or optional positional \(name)")
        }
        return value
    }

    /// The value of an optional positional argument, if given.
    func optionalPositional(_ name: String) -> String? { arguments.positionals[name] }

    /// The value of an option, if given.
    func option(_ name: String) -> String? { arguments.values[name] }

    /// Whether a flag was given.
    func flag(_ name: String) -> Bool { arguments.flags.contains(name) }

    /// The store path, the first argument of every command that has one.
    var storePath: String { positional("STORE") }

    /// An option's value as an integer in `range`.
    /// - Throws: a usage failure when it is not a whole number in range.
    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = option(name) else { return nil }
        return try Self.integer(text, named: "--\(name)", in: range)
    }

    /// Parses `text` as a whole number in `range`, or fails naming `label`.
    static func integer(_ text: String, named label: String, in range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw CommandFailure.usage("\(label) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// The `--label` option, checked against the engine's limit before the store is opened.
    func label() throws -> String? {
        guard let label = option("label") else { return nil }
        let byteCount = label.utf8.count
        if byteCount > RootRecord.maximumLabelByteCount {
            throw CommandFailure.usage("--label is \(byteCount) bytes; the limit is \(RootRecord.maximumLabelByteCount)")
        }
        return label
    }
}
