// The exit codes `chrono` promises to scripts, and the failure type that carries one.

/// How `chrono` ends. Scripts rely on these numbers; they never change meaning.
enum ExitCode: Int32, Sendable {
    /// The command did what was asked.
    case success = 0
    /// A key, root or snapshot the command named does not exist.
    case notFound = 1
    /// The command line was wrong: unknown command, bad or missing arguments, bad input lines.
    case usage = 2
    /// Stored data is damaged (found by `verify` or by any read that hit a bad page).
    case damage = 3
    /// Anything else: the store is missing or not a store, an I/O error, an unsupported format.
    case failure = 4
}

/// A failure a command reports: one line for stderr and the exit code.
///
/// Commands throw it after checking their input and before writing, so a failed command
/// leaves the store as it was.
struct CommandFailure: Error, Sendable {
    var message: String
    var exitCode: ExitCode
    /// Whether the command's usage follows the message (for mistakes on the command line).
    var showsUsage: Bool

    init(_ message: String, exitCode: ExitCode, showsUsage: Bool = false) {
        self.message = message
        self.exitCode = exitCode
        self.showsUsage = showsUsage
    }

    /// A mistake on the command line; the usage is printed after the message.
    static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: .usage, showsUsage: true)
    }

    /// Something the command was asked for does not exist.
    static func notFound(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: .notFound)
    }
}
