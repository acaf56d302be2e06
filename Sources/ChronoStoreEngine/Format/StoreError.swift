// Every error the engine throws, named for the condition, with a message a user can act on.

/// An error from the storage engine.
///
/// Damage to the medium (``isDamage``) always names the page; bad input never writes anything.
package enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    // Opening and creating
    case storeNotFound(path: String)
    case storeAlreadyExists(path: String)
    case notAStore(path: String)
    case truncatedStore(path: String, byteCount: UInt64, expectedAtLeast: UInt64)
    case unsupportedFormatVersion(found: UInt32, supported: UInt32)
    case invalidPageSize(Int)
    case pageSizeMismatch(stored: Int, requested: Int)
    case noValidHeaderSlot(path: String)

    // Damage found while reading a page
    case pageChecksumMismatch(page: PageID)
    case pageIdentityMismatch(page: PageID, found: PageID)
    case pageKindMismatch(page: PageID, expected: PageKind, found: UInt8)
    case pageBirthMismatch(page: PageID, expected: TransactionID, found: TransactionID)
    case pageOutOfRange(page: PageID, pageCount: UInt64)
    case malformedPage(page: PageID, reason: String)

    // Caller errors
    case keyTooLarge(byteCount: Int, limit: Int)
    case emptyKey
    case invalidCollectionName(String)
    case labelTooLong(byteCount: Int, limit: Int)
    case transactionFinished
    case transactionFailed
    case rootNotRetained(TransactionID)
    case noRootAtOrBefore(milliseconds: Int64)
    case cannotUndo(steps: Int, available: Int)
    case cannotRedo
    case snapshotExists(String)
    case snapshotNotFound(String)
    case invalidSnapshotName(String)
    case backupFailedVerification(path: String, problems: [String])
    case storeInUse(path: String)
    /// The store was opened with `readOnly`; it cannot be changed through this handle.
    case readOnlyStore(path: String)
    /// The store's path now names another file (it was replaced, e.g. by a restore): reopen it.
    case storeReplaced(path: String)
    case invalidBackupName(String)
    case invalidRetention(String)
    case storeClosed

    // Environment
    case writesDisabledAfterSyncFailure(underlying: IOError)
    case tooManyProcesses(limit: Int)
    case io(IOError)
    case commitDidNotConverge

    /// Whether the error reports damage to stored data (CLI exit code 3).
    package var isDamage: Bool {
        switch self {
        case .pageChecksumMismatch, .pageIdentityMismatch, .pageKindMismatch, .pageBirthMismatch,
            .pageOutOfRange, .malformedPage, .noValidHeaderSlot:
            return true
        default:
            return false
        }
    }

    /// The damaged page this error names, if any.
    package var damagedPage: PageID? {
        switch self {
        case .pageChecksumMismatch(let page), .pageIdentityMismatch(let page, _), .pageKindMismatch(let page, _, _),
            .pageBirthMismatch(let page, _, _), .pageOutOfRange(let page, _), .malformedPage(let page, _):
            return page
        default:
            return nil
        }
    }

    package var description: String {
        switch self {
        case .storeNotFound(let path): return "no store at \(path)"
        case .storeAlreadyExists(let path): return "a file already exists at \(path)"
        case .notAStore(let path): return "\(path) is not a ChronoStore file"
        case .truncatedStore(let path, let byteCount, let expected):
            return "\(path) is truncated: \(byteCount) bytes, expected at least \(expected)"
        case .unsupportedFormatVersion(let found, let supported):
            return found > supported
                ? "store format version \(found) is newer than this library supports (\(supported)); upgrade ChronoStore"
                : "store format version \(found) is not a valid ChronoStore version"
        case .invalidPageSize(let size):
            return "page size \(size) is not a power of two from 4096 to 65536"
        case .pageSizeMismatch(let stored, let requested):
            return "the store uses \(stored)-byte pages, but \(requested) was requested"
        case .noValidHeaderSlot(let path):
            return "\(path): neither header slot names a valid commit; the file header is damaged"
        case .pageChecksumMismatch(let page): return "\(page) is damaged: checksum mismatch"
        case .pageIdentityMismatch(let page, let found): return "\(page) is damaged: it claims to be \(found)"
        case .pageKindMismatch(let page, let expected, let found):
            return "\(page) is damaged: expected a \(expected) page, found kind \(found)"
        case .pageBirthMismatch(let page, let expected, let found):
            return "\(page) is damaged or stale: expected the copy written by \(expected), found \(found)"
        case .pageOutOfRange(let page, let pageCount):
            return "\(page) is damaged: it lies beyond the end of the store (\(pageCount) pages)"
        case .malformedPage(let page, let reason): return "\(page) is damaged: \(reason)"
        case .keyTooLarge(let byteCount, let limit): return "key of \(byteCount) bytes exceeds the limit of \(limit) bytes"
        case .emptyKey: return "keys must not be empty"
        case .invalidCollectionName(let name): return "invalid collection name \"\(name)\": use 1 to 255 bytes of UTF-8"
        case .labelTooLong(let byteCount, let limit): return "label of \(byteCount) bytes exceeds the limit of \(limit) bytes"
        case .transactionFinished: return "the transaction has already been committed or aborted"
        case .transactionFailed: return "an earlier edit in this transaction failed part way; the transaction was rolled back"
        case .rootNotRetained(let id): return "root \(id.rawValue) is not retained in this store's history"
        case .noRootAtOrBefore(let milliseconds): return "no retained root was committed at or before \(milliseconds) ms since 1970"
        case .cannotUndo(let steps, let available):
            return "cannot undo \(steps) step(s): only \(available) older retained root(s) on the head's line"
        case .cannotRedo: return "nothing to redo: the head has no retained redo target"
        case .snapshotExists(let name): return "a snapshot named \"\(name)\" already exists"
        case .snapshotNotFound(let name): return "no snapshot named \"\(name)\""
        case .backupFailedVerification(let path, let problems):
            return "the backup at \(path) failed verification (\(problems.count) problem(s), first: \(problems.first ?? "?")); nothing was changed"
        case .invalidBackupName(let name): return "invalid backup name \"\(name)\": use a non-empty name without \"/\" or \"@\""
        case .storeInUse(let path): return "\(path) is open in another process; close it there first"
        case .invalidRetention(let policy):
            return "invalid retention \"\(policy)\": keep 1 to \(RetentionPolicy.maximumRootCount) roots or 1 to \(RetentionPolicy.maximumDays) days"
        case .invalidSnapshotName(let name): return "invalid snapshot name \"\(name)\": use 1 to 255 bytes of UTF-8"
        case .storeClosed: return "the store is closed"
        case .writesDisabledAfterSyncFailure(let error):
            return "writes are disabled until the store is reopened, because a sync failed: \(error)"
        case .readOnlyStore(let path): return "\(path) was opened read-only"
        case .tooManyProcesses(let limit): return "more than \(limit) handles have this store open"
        case .storeReplaced(let path): return "\(path) was replaced by another file since it was opened; open it again"
        case .io(let error): return error.description
        case .commitDidNotConverge: return "internal error: free-space bookkeeping did not settle during commit"
        }
    }
}
