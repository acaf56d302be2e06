// The one public error type: every failure of the typed API, with a message a user can act on.
import ChronoStoreEngine

/// An error from ChronoStore.
///
/// Every API in this module throws either this type, `CancellationError` (a cancelled task), or
/// an error thrown by your own code (a format's migration, the body of a transaction), which
/// passes through unchanged after the transaction rolls back.
public enum ChronoStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    // Opening
    /// Nothing exists at the path, and creating was not requested.
    case storeNotFound(path: String)
    /// Creating a store where a file already exists.
    case storeAlreadyExists(path: String)
    /// The file is not a ChronoStore store, or is truncated or from a newer library.
    case notAStore(path: String, reason: String)
    /// The options are invalid (page size, retention, names).
    case invalidOptions(String)
    /// The store is closed.
    case storeClosed
    /// Another process has the store open, so it cannot be replaced.
    case storeInUse(path: String)
    /// The store was opened with `readOnly: true`; writes, undo, snapshots and the like are refused.
    case readOnlyStore(path: String)
    /// The store's file was replaced (for example restored from a backup by another process)
    /// since this handle opened it: open it again.
    case storeReplaced(path: String)

    // Records
    /// `delete` found no record with this identifier.
    case recordNotFound(datastore: String, identifier: String)
    /// A unique index already maps this value to another record; the transaction rolled back.
    case uniqueIndexViolation(datastore: String, index: String, existing: String, conflicting: String)
    /// A query used an index the store has not built yet; call `warm()` first.
    case indexNotBuilt(datastore: String, index: String)
    /// A stored record has a version the format cannot decode.
    case unsupportedRecordVersion(datastore: String, version: Int, current: Int)
    /// Stored bytes are not a well-formed record.
    case malformedRecord(reason: String)
    /// A record could not be decoded as the format's instance type.
    case decodingFailed(datastore: String, reason: String)
    /// The record with this identifier (shown as JSON, or as hex bytes for a key type of the
    /// app's own) could not be decoded: its bytes are not a record of this format (for example
    /// plain JSON written by a tool), or its version's migration failed. Only loads of this
    /// record fail; range loads skip it (see ``RecordSequence/results()``).
    case undecodableRecord(datastore: String, identifier: String, reason: String)
    /// An instance could not be encoded.
    case encodingFailed(datastore: String, reason: String)
    /// An encoded identifier or index value is longer than the store's key limit.
    case keyTooLarge(byteCount: Int, limit: Int)

    // Transactions
    /// A write was attempted inside a read-only transaction.
    case writeInReadOnlyTransaction
    /// A transaction was used after it ended (for example by an escaped sequence).
    case transactionFinished
    /// A store-wide operation (undo, snapshot, backup, close...) was called inside a transaction.
    case operationInsideTransaction(String)
    /// The label is longer than the store accepts.
    case labelTooLong(byteCount: Int, limit: Int)

    // History
    /// Undo ran out of retained history.
    case cannotUndo(steps: Int, available: Int)
    /// There is nothing to redo.
    case cannotRedo
    /// The root is no longer retained (pruned by the retention policy).
    case rootNotRetained(RootID)
    /// No retained root is as old as the date.
    case noRootAtOrBefore(millisecondsSince1970: Int64)
    /// A snapshot with this name exists already.
    case snapshotExists(String)
    /// No snapshot has this name.
    case snapshotNotFound(String)
    /// The snapshot name is empty or longer than 255 bytes of UTF-8.
    case invalidSnapshotName(String)
    /// The backup failed its integrity check; nothing changed.
    case backupFailedVerification(path: String, problems: [String])

    // Medium and environment
    /// Stored data is damaged: the page named failed verification (page 0: the file header).
    /// Never returned as data.
    case damaged(page: UInt64, detail: String)
    /// A sync failed; the store accepts no more writes until it is reopened.
    case writesDisabledAfterSyncFailure(detail: String)
    /// The operating system refused a file operation.
    case io(operation: String, path: String, code: Int32, detail: String)
    /// Another engine failure, with the engine's message.
    case engine(String)

    /// A message for people.
    public var description: String {
        switch self {
        case .storeNotFound(let path): return "no store at \(path)"
        case .storeAlreadyExists(let path): return "a file already exists at \(path)"
        case .notAStore(let path, let reason): return "cannot open \(path): \(reason)"
        case .invalidOptions(let reason): return "invalid options: \(reason)"
        case .storeClosed: return "the store is closed"
        case .storeInUse(let path): return "\(path) is open in another process; close it there first"
        case .readOnlyStore(let path): return "\(path) was opened read-only"
        case .storeReplaced(let path): return "\(path) was replaced by another file since it was opened; open it again"
        case .recordNotFound(let datastore, let identifier): return "\(datastore) has no record with identifier \(identifier)"
        case .uniqueIndexViolation(let datastore, let index, let existing, let conflicting):
            return "unique index \(index) of \(datastore) already maps this value to \(existing); \(conflicting) cannot share it (the transaction was rolled back)"
        case .indexNotBuilt(let datastore, let index):
            return "index \(index) of \(datastore) is not built yet; call warm() on the datastore first"
        case .unsupportedRecordVersion(let datastore, let version, let current):
            return "\(datastore) has a record of version \(version), which its format (version \(current)) cannot decode; implement decode(version:from:)"
        case .malformedRecord(let reason): return "a stored record is malformed: \(reason)"
        case .decodingFailed(let datastore, let reason): return "a record of \(datastore) failed to decode: \(reason)"
        case .undecodableRecord(let datastore, let identifier, let reason):
            return "the record \(identifier) of \(datastore) cannot be decoded: \(reason)"
        case .encodingFailed(let datastore, let reason): return "a record of \(datastore) failed to encode: \(reason)"
        case .keyTooLarge(let byteCount, let limit):
            return "an encoded identifier or index value of \(byteCount) bytes exceeds the limit of \(limit) bytes"
        case .writeInReadOnlyTransaction: return "cannot write inside a read-only transaction"
        case .transactionFinished: return "the transaction has already ended"
        case .operationInsideTransaction(let operation):
            return "\(operation) cannot run inside a transaction; call it after the transaction ends"
        case .labelTooLong(let byteCount, let limit): return "label of \(byteCount) bytes exceeds the limit of \(limit) bytes"
        case .cannotUndo(let steps, let available):
            return "cannot undo \(steps) step(s): only \(available) older root(s) are retained"
        case .cannotRedo: return "nothing to redo"
        case .rootNotRetained(let root): return "root \(root.rawValue) is no longer retained"
        case .noRootAtOrBefore(let milliseconds): return "no retained root was committed at or before \(milliseconds) ms since 1970"
        case .snapshotExists(let name): return "a snapshot named \"\(name)\" already exists"
        case .snapshotNotFound(let name): return "no snapshot named \"\(name)\""
        case .invalidSnapshotName(let name): return "invalid snapshot name \"\(name)\": use 1 to 255 bytes of UTF-8"
        case .backupFailedVerification(let path, let problems):
            return "the backup at \(path) failed verification (\(problems.count) problem(s), first: \(problems.first ?? "?")); nothing was changed"
        case .damaged(let page, let detail): return "the store is damaged at page \(page): \(detail)"
        case .writesDisabledAfterSyncFailure(let detail): return "writes are disabled until the store is reopened: \(detail)"
        case .io(_, _, _, let detail): return detail
        case .engine(let detail): return detail
        }
    }

    /// Maps an engine error to the public error; other errors pass through.
    static func wrap(_ error: any Error) -> any Error {
        guard let error = error as? StoreError else { return error }
        return ChronoStoreError(error)
    }

    init(_ error: StoreError) {
        if let page = error.damagedPage {
            self = .damaged(page: page.rawValue, detail: error.description)
            return
        }
        switch error {
        case .storeNotFound(let path): self = .storeNotFound(path: path)
        case .storeAlreadyExists(let path): self = .storeAlreadyExists(path: path)
        case .notAStore(let path): self = .notAStore(path: path, reason: error.description)
        case .noValidHeaderSlot: self = .damaged(page: 0, detail: error.description)
        case .truncatedStore(let path, _, _): self = .notAStore(path: path, reason: error.description)
        case .unsupportedFormatVersion: self = .notAStore(path: "the store", reason: error.description)
        case .invalidPageSize, .pageSizeMismatch, .invalidCollectionName, .invalidBackupName, .invalidRetention:
            self = .invalidOptions(error.description)
        case .keyTooLarge(let byteCount, let limit): self = .keyTooLarge(byteCount: byteCount, limit: limit)
        case .labelTooLong(let byteCount, let limit): self = .labelTooLong(byteCount: byteCount, limit: limit)
        case .transactionFinished: self = .transactionFinished
        case .rootNotRetained(let id): self = .rootNotRetained(RootID(id))
        case .noRootAtOrBefore(let milliseconds): self = .noRootAtOrBefore(millisecondsSince1970: milliseconds)
        case .cannotUndo(let steps, let available): self = .cannotUndo(steps: steps, available: available)
        case .cannotRedo: self = .cannotRedo
        case .snapshotExists(let name): self = .snapshotExists(name)
        case .snapshotNotFound(let name): self = .snapshotNotFound(name)
        case .invalidSnapshotName(let name): self = .invalidSnapshotName(name)
        case .backupFailedVerification(let path, let problems): self = .backupFailedVerification(path: path, problems: problems)
        case .storeInUse(let path): self = .storeInUse(path: path)
        case .readOnlyStore(let path): self = .readOnlyStore(path: path)
        case .storeReplaced(let path): self = .storeReplaced(path: path)
        case .storeClosed: self = .storeClosed
        case .writesDisabledAfterSyncFailure: self = .writesDisabledAfterSyncFailure(detail: error.description)
        case .io(let io): self = .io(operation: io.operation, path: io.path, code: io.code, detail: io.description)
        default: self = .engine(error.description)
        }
    }
}

/// Runs engine code, translating its errors to ``ChronoStoreError``.
func engineCall<Result>(_ body: () throws -> Result) throws -> Result {
    do { return try body() } catch { throw ChronoStoreError.wrap(error) }
}
