// The open store: opening, creating, in-memory stores, closing, and access to datastores.
public import Foundation
import ChronoStoreEngine

/// An open ChronoStore: one file holding any number of typed datastores and their history.
///
/// Every write commits a new immutable *root*; history (undo, redo, as-of reads, snapshots,
/// backups) falls out of keeping old roots. Open one `ChronoStore` per file per process and share
/// it: it is `Sendable`, and all its methods may be called from any task or actor.
///
/// ```swift
/// let store = try await ChronoStore.open(at: ChronoStore.defaultURL())
/// let notes = store.datastore(NoteFormat.self)
/// try await notes.persist(Note(id: 1, title: "Buy milk"))
/// ```
///
/// Concurrency: readers never block and never see a half-done transaction; one write transaction
/// runs at a time (across threads and processes). Waiting for the writer suspends the task: the
/// wait for another process's writer, and a durable commit's sync, run on a serial queue of the
/// store's own, never on the caller's thread (the main thread stays responsive) nor on Swift's
/// cooperative thread pool.
public final class ChronoStore: Sendable {
    let engine: Store
    let writers = AsyncGate()
    let lane: BlockingLane
    let hub: ChangeHub
    /// The store's file, or nil for an in-memory store.
    public let url: URL?

    init(engine: Store, url: URL?) {
        self.engine = engine
        self.url = url
        self.lane = BlockingLane(label: "ChronoStore \(url?.path ?? "in memory")")
        self.hub = ChangeHub(engine: engine, watchesOtherProcesses: url != nil)
    }

    deinit {
        hub.shutDown()
        try? engine.close()
    }

    /// Opens the store at `url`, creating it (and missing parent directories) if it does not exist.
    ///
    /// Cost: O(1) in store size and history length after a clean close; after a crash, O(pages of
    /// the last transaction) to recover. Nothing is written when opening fails.
    /// - Parameters:
    ///   - url: a file URL.
    ///   - options: page size, durability, retention and cache size. Retention and page size
    ///     apply when the store is created.
    ///   - createIfMissing: when false, a missing file is an error. Several processes (an app and
    ///     its extension) may open one missing store at the same moment: it is created whole under
    ///     a temporary name and linked into place, so each of them opens the same complete store.
    ///   - readOnly: open for reading only. Nothing is created or written (no lock file, no
    ///     recovery marks), so a store on read-only media, or a read-only file, opens and reads;
    ///     every write, undo, snapshot or restore throws ``ChronoStoreError/readOnlyStore(path:)``.
    ///     A read-only open never creates a missing store.
    /// - Throws: ``ChronoStoreError/storeNotFound(path:)``, ``ChronoStoreError/notAStore(path:reason:)``,
    ///   ``ChronoStoreError/invalidOptions(_:)``, ``ChronoStoreError/io(operation:path:code:detail:)``.
    public static func open(
        at url: URL, options: ChronoStoreOptions = ChronoStoreOptions(), createIfMissing: Bool = true, readOnly: Bool = false
    ) throws -> ChronoStore {
        let path = url.path
        if readOnly {
            let engine = try engineCall { try Store.open(at: path, options: options.engineValue, readOnly: true) }
            return ChronoStore(engine: engine, url: url)
        }
        if createIfMissing && !FileManager.default.fileExists(atPath: path) {
            try createParentDirectory(of: url)
            let engine = try engineCall { try Store.openOrCreate(at: path, options: options.engineValue) }
            return ChronoStore(engine: engine, url: url)
        }
        let engine = try engineCall { try Store.open(at: path, options: options.engineValue) }
        return ChronoStore(engine: engine, url: url)
    }

    /// Opens the store at `url` without blocking the calling thread: the synchronous `open` with
    /// the same parameters (see it for what they mean), run on a queue of its own. In an `async`
    /// context Swift picks this one. Opening may wait for another process that is writing or recovering the store;
    /// the calling task suspends meanwhile, so call this one from the main actor.
    public static func open(
        at url: URL, options: ChronoStoreOptions = ChronoStoreOptions(), createIfMissing: Bool = true, readOnly: Bool = false
    ) async throws -> ChronoStore {
        let lane = BlockingLane(label: "ChronoStore open \(url.path)")
        return try await lane.run {
            try open(at: url, options: options, createIfMissing: createIfMissing, readOnly: readOnly)
        }
    }

    private static func createParentDirectory(of url: URL) throws {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ChronoStoreError.io(
                operation: "mkdir", path: directory.path, code: 0, detail: "cannot create \(directory.path): \(error)")
        }
    }

    /// Creates a new, empty store at `url` (and missing parent directories) and opens it.
    /// - Throws: ``ChronoStoreError/storeAlreadyExists(path:)`` when anything exists at `url`.
    public static func create(at url: URL, options: ChronoStoreOptions = ChronoStoreOptions()) throws -> ChronoStore {
        try createParentDirectory(of: url)
        let engine = try engineCall { try Store.create(at: url.path, options: options.engineValue) }
        return ChronoStore(engine: engine, url: url)
    }

    /// A new store kept in memory, for tests and previews.
    ///
    /// It runs the same engine as a file store over an in-memory file, so transactions, history,
    /// snapshots, indexes and observation behave exactly as on disk. Its contents vanish with the
    /// object; ``backup(to:of:progress:)`` can save them to a file.
    public static func inMemory(options: ChronoStoreOptions = ChronoStoreOptions()) throws -> ChronoStore {
        let file = FaultInjectingFile(name: "memory")
        let engine = try engineCall { try Store.create(in: file, options: options.engineValue) }
        return ChronoStore(engine: engine, url: nil)
    }

    /// The datastore for `format` in this store. Cheap: it holds no state of its own, so call it
    /// wherever convenient. The datastore's records live in the engine collection
    /// `Format.name`, its indexes in `Format.name/indexName`.
    public func datastore<Format: DatastoreFormat>(_ format: Format.Type) -> Datastore<Format> {
        Datastore(store: self)
    }

    /// Makes every commit so far durable (useful with ``Durability/deferred(checkpointInterval:)``).
    /// A no-op when nothing is pending.
    public func synchronize() async throws {
        try ensureNoActiveTransaction("synchronize")
        await writers.acquire()
        defer { writers.release() }
        try await lane.run { [engine] in try engine.synchronize() }
    }

    /// Syncs pending commits, ends every observation stream, and closes the file. Later calls
    /// throw ``ChronoStoreError/storeClosed``. Safe to call more than once.
    public func close() async throws {
        try ensureNoActiveTransaction("close")
        await writers.acquire()
        defer { writers.release() }
        hub.shutDown()
        try await lane.run { [engine] in try engine.close() }
    }

    /// The largest encoded identifier or index value this store accepts, in bytes.
    public var maximumKeyByteCount: Int { engine.maximumKeyByteCount }

    /// Why this handle's last background packing commit failed, or nil when it succeeded (or
    /// none has run).
    ///
    /// With ``ChronoStoreOptions/packsHistory`` (the default) and durable commits, old roots'
    /// replaced pages are packed into deltas by commits of the store's own, built on its queue
    /// while your commit syncs. One that fails changes nothing and costs your commits nothing:
    /// they succeed as before, and the history it would have packed stays as whole pages (the
    /// file grows faster) until a later packing commit succeeds, which clears this. The next
    /// commits retry. A failure that lasts usually means damage in old history (a
    /// ``ChronoStoreError/damaged(page:detail:)`` naming the page; `chrono verify` reports it)
    /// or a full disk. Check it in diagnostics, or when the file grows more than expected.
    public var backgroundPackingFailure: (any Error)? {
        engine.packingCommitFailure.map { ChronoStoreError.wrap($0) }
    }

    /// Throws when the current task is inside a transaction on this store (the operation would
    /// wait for that transaction's own writer).
    func ensureNoActiveTransaction(_ operation: String) throws {
        if TransactionContext.active(for: self) != nil {
            throw ChronoStoreError.operationInsideTransaction(operation)
        }
    }
}
