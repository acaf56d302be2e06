// The transaction a task is inside, found through a task-local value so nested calls join it.
import ChronoStoreEngine

/// One open transaction of the typed layer: an engine read or write transaction, the changes
/// made so far (for observers), and whether it has ended.
///
/// `@unchecked Sendable`: child tasks inherit the task-local value, so several tasks may use one
/// context at once; `lock` serializes every use of the engine transaction and of `changes`.
final class TransactionContext: @unchecked Sendable {
    private let lock = Lock()
    private let writer: WriteTransaction?
    private let reader: ReadTransaction?
    // Guarded by `lock`:
    private var isFinished = false
    private(set) var changes = ChangeLog()

    init(writer: WriteTransaction) {
        self.writer = writer
        self.reader = nil
    }

    init(reader: ReadTransaction) {
        self.writer = nil
        self.reader = reader
    }

    var isReadOnly: Bool { writer == nil }

    /// Runs `body` with a reader that sees this transaction's own edits.
    func read<Result>(_ body: (any CollectionReading) throws -> Result) throws -> Result {
        try lock.withLock {
            guard !isFinished else { throw ChronoStoreError.transactionFinished }
            if let writer { return try body(writer) }
            return try body(reader!)
        }
    }

    /// Runs `body` with the write transaction and the change log.
    /// - Throws: ``ChronoStoreError/writeInReadOnlyTransaction`` in a read-only transaction.
    func write<Result>(_ body: (WriteTransaction, inout ChangeLog) throws -> Result) throws -> Result {
        try lock.withLock {
            guard !isFinished else { throw ChronoStoreError.transactionFinished }
            guard let writer else { throw ChronoStoreError.writeInReadOnlyTransaction }
            return try body(writer, &changes)
        }
    }

    /// Marks the transaction ended: later uses (an escaped sequence) throw.
    func finish() -> ChangeLog {
        lock.withLock {
            isFinished = true
            return changes
        }
    }

    // MARK: - The task-local registry

    /// The open transactions of the current task, by store.
    @TaskLocal static var active: [ObjectIdentifier: TransactionContext] = [:]

    static func active(for store: ChronoStore) -> TransactionContext? { active[ObjectIdentifier(store)] }

    static func binding(_ context: TransactionContext, for store: ChronoStore) -> [ObjectIdentifier: TransactionContext] {
        var contexts = active
        contexts[ObjectIdentifier(store)] = context
        return contexts
    }
}

/// The record changes of one transaction, coalesced per key: the first old value and the last
/// new value. Changes that cancel out (created then deleted) disappear.
///
/// It also caches, per datastore, the index state a write checked once in this transaction.
struct ChangeLog: Sendable {
    private(set) var changes: [RawChange] = []
    /// Datastore name → the indexes known built in this transaction (see `prepareIndexes`).
    var preparedIndexes: [String: DatastoreMetadata] = [:] {
        didSet { lastBuiltIndexes = nil }
    }
    /// The declared indexes `prepareIndexes` last found built (an `[AnyDatastoreIndex<Format>]`),
    /// with the format and datastore they were found for, so the next writes through that format
    /// neither rebuild its declared list nor filter it. One entry, not a map: most transactions
    /// write one datastore, and a map cost an allocation in every one-record transaction. Keyed
    /// by the format itself, not only its name: two formats may share a datastore, and an empty
    /// list of one would cast to the other's. Cleared whenever `preparedIndexes` changes.
    var lastBuiltIndexes: (format: ObjectIdentifier, datastore: String, indexes: any Sendable)?
    /// Datastores whose identifier shape this transaction has recorded (see `recordIdentifierShape`).
    var describedDatastores: Set<String> = []
    private var positions: [ChangeKey: Int] = [:]

    private struct ChangeKey: Hashable {
        var collection: String
        var key: [UInt8]
    }

    mutating func record(collection: String, key: [UInt8], old: [UInt8]?, new: [UInt8]?) {
        let changeKey = ChangeKey(collection: collection, key: key)
        if let index = positions[changeKey] {
            changes[index].new = new
        } else {
            positions[changeKey] = changes.count
            changes.append(RawChange(collection: collection, key: key, old: old, new: new))
        }
    }

    /// The effective changes, in first-touched order.
    var effective: [RawChange] { changes.filter { $0.old != $0.new } }
}
