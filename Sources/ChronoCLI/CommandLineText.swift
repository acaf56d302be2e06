// The command line's words decoded strictly as UTF-8, so no two different byte strings become one key.
import Foundation

enum CommandLineText {
    /// The words after the program name. Swift's `CommandLine.arguments` replaces bytes that are
    /// not UTF-8 with U+FFFD, which would make `$'\xff'` and `$'\xfe'` the same key; these are
    /// decoded from the raw bytes instead.
    /// - Throws: a usage failure naming the first word that is not valid UTF-8.
    static func arguments() throws -> [String] {
        try (1..<Int(CommandLine.argc)).map { index in
            guard let raw = CommandLine.unsafeArgv[index], let word = String(validatingCString: raw) else {
                throw CommandFailure.usage("argument \(index) is not valid UTF-8; keys and names must be UTF-8 text")
            }
            return word
        }
    }
}
