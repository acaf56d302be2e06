// Which exit code each engine error earns, and the one-line message it prints.
import ChronoStoreEngine

extension CommandFailure {
    /// The failure to report for an error a command let through.
    ///
    /// Damage is 3, and so is a backup that fails its check; a missing root or snapshot is 1;
    /// input the engine refused (a key too large for the page size, a bad collection name) is 2;
    /// everything else, including a missing store file, is 4, so a mistyped store path is never
    /// mistaken for a missing key.
    init(_ error: any Error) {
        if let failure = error as? CommandFailure {
            self = failure
        } else if let error = error as? StoreError {
            let exitCode = Self.exitCode(for: error)
            self.init(Self.message(for: error), exitCode: exitCode, showsUsage: exitCode == .usage)
        } else {
            self.init("\(error)", exitCode: .failure)
        }
    }

    /// The engine's message, with times in ISO-8601 as the command line takes them.
    private static func message(for error: StoreError) -> String {
        if case .noRootAtOrBefore(let milliseconds) = error {
            return "no retained root was committed at or before \(Timestamp.text(milliseconds: milliseconds))"
        }
        return "\(error)"
    }

    private static func exitCode(for error: StoreError) -> ExitCode {
        if error.isDamage { return .damage }
        switch error {
        case .backupFailedVerification, .truncatedStore:
            return .damage
        case .rootNotRetained, .noRootAtOrBefore, .snapshotNotFound:
            return .notFound
        case .keyTooLarge, .emptyKey, .invalidCollectionName, .labelTooLong, .invalidSnapshotName, .invalidRetention:
            return .usage
        default:
            return .failure
        }
    }
}
