// Naming a root on the command line: its id, or (for `--at`) an ISO-8601 date.
import ChronoStoreEngine

/// Parses the ways a command line names a root.
enum RootArgument {
    /// A root id: a whole number from 1.
    /// - Throws: a usage failure naming `label`.
    static func id(_ text: String, named label: String) throws -> TransactionID {
        guard let value = UInt64(text), value >= 1 else {
            throw CommandFailure.usage("\(label) must be a root id (a whole number from 1), not '\(text)'")
        }
        return TransactionID(value)
    }

    /// `--at ROOT` or `--at DATE` (the root that was the head at that time); the head
    /// when the option is absent.
    /// - Throws: a usage failure when the value is neither.
    static func selector(_ text: String?) throws -> RootSelector {
        guard let text else { return .head }
        if text.allSatisfy(\.isNumber) { return .root(try id(text, named: "--at")) }
        guard let milliseconds = Timestamp.milliseconds(text) else {
            throw CommandFailure.usage("--at must be a root id or an ISO-8601 date such as 2026-03-01T09:30:00Z, not '\(text)'")
        }
        return .time(milliseconds)
    }
}
