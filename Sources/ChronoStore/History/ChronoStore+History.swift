// History at the typed level: listing, undo, redo, revert, retention, pruning.
import ChronoStoreEngine

extension ChronoStore {
    /// The retained roots, newest first: the head and its ancestors, or every retained root
    /// including side branches (`allBranches`), a page at a time.
    ///
    /// ```swift
    /// let page = try await store.history(limit: 20)
    /// let next = try await store.history(limit: 20, before: page.last?.id)
    /// ```
    ///
    /// - Parameters:
    ///   - limit: at most this many roots (nil: all). The result is the first `limit` items of the
    ///     whole listing, in the same shape.
    ///   - before: continue after this root: on the head's line its ancestors, with `allBranches`
    ///     the roots with smaller ids. Pass the last id of the previous page.
    /// - Throws: ``ChronoStoreError/rootNotRetained(_:)`` when `before` is not retained.
    /// - Complexity: O(L log R + S) for L roots listed, R retained roots and S snapshots.
    public func history(allBranches: Bool = false, limit: Int? = nil, before: RootID? = nil) async throws -> [HistoryRoot] {
        try engineCall {
            try engine.history(allBranches: allBranches, limit: limit, before: before?.engineValue).map(HistoryRoot.init)
        }
    }

    /// The current head root.
    public func head() async throws -> RootID {
        try engineCall { RootID(try engine.snapshot.head.transaction) }
    }

    /// Moves the head back `steps` roots: every datastore reads as it did then. Durable; O(steps)
    /// whatever the store size. Observers receive the differences. A new commit after an undo
    /// starts a branch; ``redo()`` moves forward again.
    /// - Returns: the new head.
    /// - Throws: ``ChronoStoreError/cannotUndo(steps:available:)`` when history runs out (nothing
    ///   changes), ``ChronoStoreError/operationInsideTransaction(_:)``.
    @discardableResult
    public func undo(steps: Int = 1) async throws -> RootID {
        guard steps >= 1 else { throw ChronoStoreError.invalidOptions("undo needs at least one step, not \(steps)") }
        return try await historyOperation("undo") { [engine] in RootID(try engine.undo(steps: steps)) }
    }

    /// Moves the head forward to the root it was last undone from. Durable; O(1).
    /// - Throws: ``ChronoStoreError/cannotRedo``.
    @discardableResult
    public func redo() async throws -> RootID {
        try await historyOperation("redo") { [engine] in RootID(try engine.redo()) }
    }

    /// Commits a new root whose contents equal `root`'s. O(1); it can itself be undone.
    /// - Throws: ``ChronoStoreError/rootNotRetained(_:)``.
    @discardableResult
    public func revert(to root: RootID, label: String? = nil) async throws -> RootID {
        try await historyOperation("revert") { [engine] in RootID(try engine.revert(to: root.engineValue, label: label)) }
    }

    /// Changes how much history is kept; takes effect at the next commit or ``prune()``.
    public func setRetention(_ retention: HistoryRetention, dropsUndoneBranches: Bool? = nil) async throws {
        try await historyOperation("setRetention") { [engine] in
            try engine.setRetention(retention.engineValue, dropsUndoneBranches: dropsUndoneBranches)
        }
    }

    /// Applies the retention policy to all history now (commits do it gradually).
    /// - Returns: how many roots were dropped. Cost: O(pages freed).
    @discardableResult
    public func prune() async throws -> Int {
        try await historyOperation("prune") { [engine] in try engine.prune() }
    }

    /// Drops every root except the head, snapshots, and roots open readers use. In deferred
    /// durability the newest synced root stays too, until a sync (``synchronize()``): a crash
    /// returns to it.
    /// - Returns: how many roots were dropped. Cost: when only the head stays (no snapshot, no
    ///   reader of another root), O(pages of the file / 64 + pages of the head), whatever the
    ///   number of roots; otherwise O(roots × log roots + pages freed). With
    ///   ``ChronoStoreOptions/secureDelete``, the freed pages are also overwritten with zeros.
    @discardableResult
    public func clearHistory() async throws -> Int {
        try await historyOperation("clearHistory") { [engine] in try engine.clearHistory() }
    }

    /// Runs a store-wide engine write outside any transaction, then tells observers.
    /// The engine call runs on the store's lane: it waits for other processes' writers.
    func historyOperation<Result: Sendable>(
        _ name: String, _ body: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try ensureNoActiveTransaction(name)
        await writers.acquire()
        defer { writers.release() }
        let result = try await lane.run(body)
        hub.catchUp()
        return result
    }
}
