// Explicit transactions: read-write with a label, read-only at the head or any retained root.
import ChronoStoreEngine
import Foundation

extension ChronoStore {
    /// Runs `body` in one write transaction and commits everything it wrote as one new root.
    ///
    /// Every datastore operation inside `body` (on any datastore of this store, in this task or
    /// its child tasks) joins the transaction, so several datastores commit atomically. If `body`
    /// throws, nothing it wrote is kept and the error is rethrown. A nested `transaction` call
    /// joins the outer transaction (its label is ignored). Observers hear about the changes after
    /// the commit. With ``Durability/durable``, the commit is durable when this returns.
    ///
    /// Only one write transaction runs at a time; others wait (suspending, not blocking a
    /// thread: the wait for another process's writer and the wait for a sync another commit
    /// leads run on the store's own queues, so a transaction started on the main actor never
    /// stalls it; a lone durable commit's own sync runs on the calling thread unless that is the
    /// main thread). Keep transactions short, and do not call store-wide operations such as
    /// ``undo(steps:)`` inside one.
    /// - Parameters:
    ///   - label: an action name recorded in the root, shown by ``history(allBranches:)`` (for
    ///     an Undo menu).
    ///   - isolation: the actor `body` runs on; the caller's, by default.
    ///   - body: the work.
    /// - Throws: what `body` throws, or ``ChronoStoreError``.
    ///
    /// The transaction is found through a task-local value, so child tasks and unstructured
    /// `Task { }` blocks created inside `body` join it too; use `Task.detached` for independent
    /// work (and never wait inside `body` for a detached task that writes to this store: it waits
    /// for this transaction to end).
    @discardableResult
    public func transaction<Result>(
        label: String? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        if let context = TransactionContext.active(for: self) {
            guard !context.isReadOnly else { throw ChronoStoreError.writeInReadOnlyTransaction }
            return try await body()
        }
        await writers.acquire()
        let (writer, base): (WriteTransaction, TransactionID)
        do { (writer, base) = try await beginWrite(label: label) } catch {
            writers.release()
            throw error
        }
        let context = TransactionContext(writer: writer)
        let result: Result
        do {
            result = try await TransactionContext.$active.withValue(TransactionContext.binding(context, for: self)) {
                try await body()
            }
        } catch {
            _ = context.finish()
            writer.abort()
            writers.release()
            throw ChronoStoreError.wrap(error)
        }
        let log = context.finish()
        if try await commit(writer) { hub.publish(from: base, recorded: log.effective) }
        return result
    }

    /// Runs `body` in a read-only transaction: every read inside sees one root, unaffected by
    /// commits made meanwhile.
    ///
    /// With `root` other than `.head`, reads see the store as it was at that retained root, date
    /// or snapshot (an as-of read). Writes inside throw
    /// ``ChronoStoreError/writeInReadOnlyTransaction``. Inside a write transaction, a `.head`
    /// read joins it (and sees its edits). The root stays pinned (not pruned) while `body` runs.
    /// Cost: O(log roots) to find a historical root; reads then cost the same as at the head.
    /// - Parameters:
    ///   - root: which root to read; the head by default.
    ///   - isolation: the actor `body` runs on; the caller's, by default.
    ///   - body: the reads.
    /// - Throws: ``ChronoStoreError/rootNotRetained(_:)``, ``ChronoStoreError/noRootAtOrBefore(millisecondsSince1970:)``,
    ///   ``ChronoStoreError/snapshotNotFound(_:)``, or what `body` throws.
    @discardableResult
    public func read<Result>(
        at root: RootSelection = .head, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        if root == .head, TransactionContext.active(for: self) != nil { return try await body() }
        let reader = try engineCall { try engine.beginRead(at: root.engineValue) }
        defer { reader.close() }
        let context = TransactionContext(reader: reader)
        defer { _ = context.finish() }
        do {
            return try await TransactionContext.$active.withValue(TransactionContext.binding(context, for: self)) {
                try await body()
            }
        } catch {
            throw ChronoStoreError.wrap(error)
        }
    }

    // MARK: - Implicit transactions for single operations

    /// Runs a synchronous read in the current transaction, or in a fresh read of the head.
    func performRead<Result>(_ body: (any CollectionReading) throws -> Result) throws -> Result {
        if let context = TransactionContext.active(for: self) { return try engineCall { try context.read(body) } }
        return try engineCall {
            let reader = try engine.beginRead()
            defer { reader.close() }
            return try body(reader)
        }
    }

    /// Runs a synchronous write in the current transaction, or in its own committed transaction.
    func performWrite<Result>(
        label: String? = nil, _ body: (WriteTransaction, inout ChangeLog) throws -> Result
    ) async throws -> Result {
        if let context = TransactionContext.active(for: self) { return try engineCall { try context.write(body) } }
        await writers.acquire()
        let (writer, base): (WriteTransaction, TransactionID)
        do { (writer, base) = try await beginWrite(label: label) } catch {
            writers.release()
            throw error
        }
        var log = ChangeLog()
        let result: Result
        do {
            result = try engineCall { try body(writer, &log) }
        } catch {
            writer.abort()
            writers.release()
            throw error
        }
        if try await commit(writer) { hub.publish(from: base, recorded: log.effective) }
        return result
    }

    /// Takes the engine's writer and returns it with the head it starts from: here when it is
    /// free, else on the lane (it may wait for another process, or for this process's sync).
    private func beginWrite(label: String?) async throws -> (WriteTransaction, TransactionID) {
        @Sendable func started(_ writer: WriteTransaction) throws -> LaneHandoff<(WriteTransaction, TransactionID)> {
            do {
                writer.label = label
                return LaneHandoff(value: (writer, try engine.snapshot.head.transaction))
            } catch {
                writer.abort()
                throw error
            }
        }
        if let writer = try engineCall({ try engine.beginWriteWithoutWaiting() }) {
            return try engineCall { try started(writer) }.value
        }
        let handoff = try await lane.run { [engine] in try started(engine.beginWrite()) }
        return handoff.value
    }

    /// Whether the calling thread is the main thread. `commit(_:)` is a nonisolated async function
    /// and runs on the cooperative pool today; this keeps a sync off the main thread should it
    /// ever run on the caller's actor. A synchronous function: `Thread.isMainThread` is
    /// unavailable from asynchronous contexts on Apple platforms.
    private static func isOnMainThread() -> Bool { Thread.isMainThread }

    /// Commits `writer` and releases the writer gate (whatever happens); returns whether a new
    /// root was committed, once it is durable.
    ///
    /// A durable commit is written here (its pages go to the file's cache; nothing waits for
    /// the disk), after which the gate is released, so the next transaction is built and written
    /// meanwhile. When no other commit of this process is in flight, its sync then runs here too
    /// (off the main thread); otherwise the task suspends until the engine's relay thread has
    /// synced the group holding it, and several durable commits share one sync (group commit). A commit that syncs as it is
    /// written (deferred mode's checkpoints, secure delete) is written on the lane.
    private func commit(_ writer: WriteTransaction) async throws -> Bool {
        let handoff = LaneHandoff(value: writer)
        let ticket: CommitTicket?
        do {
            if writer.commitWaitsForNoSync {
                ticket = try engineCall { try handoff.value.writeCommit() }
            } else {
                ticket = try await lane.run { try handoff.value.writeCommit() }
            }
        } catch {
            writers.release()
            throw error
        }
        writers.release()
        guard let ticket else { return false }
        // A lone commit syncs right here (one `fdatasync`, bounded I/O), saving the two thread
        // hops of a wait on another thread: about 58 µs of a 373 µs typed commit on Linux
        // (Docs/Performance.md, "A lone commit's sync on the calling thread"). Never on the main
        // thread, and never to wait for another writer's sync.
        if !Self.isOnMainThread(), try engineCall({ try engine.awaitDurableIfAlone(ticket) }) { return true }
        // Otherwise the task suspends until the sync covering it, blocking no thread: the store's
        // relay thread leads the groups of such waiters (a thread a waiter, each woken by every
        // synced group, made concurrent typed transactions CPU-bound; Docs/Performance.md).
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            engine.notifyWhenDurable(ticket) { outcome in
                continuation.resume(with: outcome.mapError { ChronoStoreError.wrap($0) })
            }
        }
        return true
    }
}
