// Ctrl-C during work that can stop cleanly (backup, restore): noticed at the next progress report.
import Foundation

/// Turns SIGINT into a ``CommandFailure`` thrown from a progress callback, so the engine can
/// clean up (a backup removes its temporary file, a restore aborts its transaction) instead of
/// the process dying half-way.
///
/// While ``catching(_:)`` runs, SIGINT only sets a flag; ``check(_:)`` throws once it is set.
/// Outside it, SIGINT ends the process as usual.
enum Interruption {
    /// Set by the signal handler, read by ``check(_:)``; one command runs on the main thread,
    /// and a `sig_atomic_t` store is the one thing a signal handler may safely do.
    nonisolated(unsafe) private static var requested: sig_atomic_t = 0

    /// Runs `body` with SIGINT caught, then restores the previous handler.
    static func catching<Result>(_ body: () throws -> Result) rethrows -> Result {
        requested = 0
        let previous = signal(SIGINT) { _ in Interruption.requested = 1 }
        defer { signal(SIGINT, previous) }
        return try body()
    }

    /// Throws a failure (exit 4) saying `outcome` when Ctrl-C was pressed.
    /// - Parameter outcome: what the interruption left, such as "no backup was written".
    static func check(_ outcome: @autoclosure () -> String) throws {
        if requested != 0 { throw CommandFailure("interrupted; \(outcome())", exitCode: .failure) }
    }
}
