// Parsing a command's arguments by hand: positionals in order, `--name value` options, flags.

/// An option a command accepts: a flag (`--reverse`) or one that takes a value (`--limit N`).
struct OptionSpec: Sendable {
    /// The name without dashes.
    var name: String
    /// What the value stands for in help (`N`, `TEXT`); nil for a flag.
    var valueName: String?
    var summary: String

    static func flag(_ name: String, _ summary: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, summary: summary)
    }

    static func value(_ name: String, _ valueName: String, _ summary: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, summary: summary)
    }

    /// How the option appears in a synopsis: `[--limit N]`.
    var synopsis: String { "[--\(name)\(valueName.map { " \($0)" } ?? "")]" }
}

/// A positional argument a command takes, in order.
struct PositionalSpec: Sendable {
    /// The name shown in help, such as `STORE`.
    var name: String
    var isOptional = false

    static func required(_ name: String) -> PositionalSpec { PositionalSpec(name: name) }
    static func optional(_ name: String) -> PositionalSpec { PositionalSpec(name: name, isOptional: true) }

    var synopsis: String { isOptional ? "[\(name)]" : name }
}

/// A command line, parsed against one command's specs.
struct ParsedArguments {
    /// Positional values by spec name; optional ones that were left out are missing.
    var positionals: [String: String] = [:]
    /// Option values by name (without dashes).
    var values: [String: String] = [:]
    /// Flags that were given.
    var flags: Set<String> = []
}

/// The hand-written parser. Tokens starting with `--` are options (`--name value` or
/// `--name=value`); everything else, including `-5`, is positional; `--` ends the options, so
/// a key such as `--odd` can be passed after it.
enum ArgumentParser {
    /// The options every command accepts.
    static let commonOptions: [OptionSpec] = [
        .flag("json", "print machine-readable JSON on stdout"),
        .flag("help", "show this help"),
    ]

    /// Parses `tokens` (the words after the command's name).
    /// - Throws: a usage failure naming the first problem.
    static func parse(_ tokens: [String], positionals: [PositionalSpec], options: [OptionSpec]) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var words: [String] = []
        var index = 0
        var optionsEnded = false
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if optionsEnded || !token.hasPrefix("--") || token == "-" {
                words.append(token)
            } else if token == "--" {
                optionsEnded = true
            } else {
                try parseOption(token, tokens: tokens, index: &index, options: options + commonOptions, into: &parsed)
            }
        }
        try assign(words, to: positionals, into: &parsed)
        return parsed
    }

    private static func parseOption(
        _ token: String, tokens: [String], index: inout Int, options: [OptionSpec], into parsed: inout ParsedArguments
    ) throws {
        let body = token.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
        guard let spec = options.first(where: { $0.name == name }) else {
            throw CommandFailure.usage("unknown option --\(name)")
        }
        guard let valueName = spec.valueName else {
            if inlineValue != nil { throw CommandFailure.usage("--\(name) takes no value") }
            parsed.flags.insert(name)
            return
        }
        let value: String
        if let inlineValue {
            value = inlineValue
        } else {
            guard index < tokens.count else { throw CommandFailure.usage("--\(name) needs a value (\(valueName))") }
            value = tokens[index]
            index += 1
        }
        guard parsed.values.updateValue(value, forKey: name) == nil else {
            throw CommandFailure.usage("--\(name) is given more than once")
        }
    }

    private static func assign(_ words: [String], to specs: [PositionalSpec], into parsed: inout ParsedArguments) throws {
        if words.count > specs.count {
            throw CommandFailure.usage("unexpected argument '\(words[specs.count])'")
        }
        for (index, spec) in specs.enumerated() {
            if index < words.count {
                parsed.positionals[spec.name] = words[index]
            } else if !spec.isOptional {
                throw CommandFailure.usage("missing \(spec.name)")
            }
        }
    }
}
