// History operations on a store: listing, as-of reads, undo, redo, revert, retention, pruning.

/// One retained root as history lists it.
package struct HistoryItem: Equatable, Sendable {
    package var id: TransactionID
    package var parent: TransactionID?
    package var timeMilliseconds: Int64
    package var label: String?
    /// Pages the commit wrote plus pages it replaced.
    package var pagesChanged: Int
    package var isHead: Bool
    /// A retained root no other retained root was committed on, off the head's line.
    package var isBranchTip: Bool
    /// For a revert, the root whose contents it took.
    package var revertedTo: TransactionID?
    /// Where ``Store/redo()`` goes from this root, if it is retained.
    package var redoTarget: TransactionID?
    /// Names of the snapshots that pin this root.
    package var snapshots: [String] = []
}

/// Which root a read transaction should see.
package enum RootSelector: Equatable, Sendable {
    case head
    case root(TransactionID)
    /// The root that was the head at this time (milliseconds since 1970; see `HeadTimeline`).
    case time(Int64)
    /// The root a snapshot pins.
    case snapshot(String)
}

extension Store {
    /// Starts a read transaction on a retained root, pinning it. Reads there cost the same as
    /// at the head. O(log roots) to find the root. A time reads the root that was the head at
    /// that time (after undo, redo, revert and checkout as well as commits; see `HeadTimeline`);
    /// a time at or after the store clock's present reads the head.
    /// - Throws: ``StoreError/rootNotRetained(_:)`` (also when the root that was the head at a
    ///   time is no longer retained) or ``StoreError/noRootAtOrBefore(milliseconds:)``.
    package func beginRead(at selector: RootSelector) throws -> ReadTransaction {
        if selector == .head { return try beginRead() }
        if case .time(let milliseconds) = selector, milliseconds >= options.clock.nowMilliseconds() { return try beginRead() }
        // Pin the head first so the history index cannot change under the lookup.
        let current = try beginRead()
        defer { current.close() }
        let trees = HistoryTrees(state: current.snapshot.state)
        let id: TransactionID
        switch selector {
        case .head: id = current.snapshot.head.transaction
        case .root(let root): id = root
        case .snapshot(let name):
            guard let info = try SnapshotTree.find(name, in: current.snapshot.state.snapshots, reader: current.treeReader)
            else { throw StoreError.snapshotNotFound(name) }
            id = info.root
        case .time(let milliseconds):
            id = try headRoot(at: milliseconds, state: current.snapshot.state, reader: current.treeReader)
        }
        try pin(id)
        do {
            guard let entry = try trees.entry(id, reader: current.treeReader) else { throw StoreError.rootNotRetained(id) }
            // An old root page may be packed, its slot reused: pack first.
            let record = try LoadedRoot(entry.rootPage, reader: current.historicReader).record
            var snapshot = current.snapshot
            snapshot.head = record
            return ReadTransaction(store: self, snapshot: snapshot)
        } catch {
            unpin(id)
            throw error
        }
    }

    /// The root that was the head at `milliseconds`: from the head timeline, or, in a store whose
    /// head has never changed since it was created or restored with history (no timeline yet),
    /// the newest root committed at or before then.
    private func headRoot(at milliseconds: Int64, state: StateRecord, reader: some TreeReading) throws -> TransactionID {
        let found: TransactionID?
        if !state.hasHeadTimeline {
            found = try HistoryTrees(state: state).newestRoot(atOrBefore: milliseconds, reader: reader)
        } else {
            found = try HeadTimeline(state: state)
                .head(atOrBefore: milliseconds, reader: reader)
        }
        guard let found else { throw StoreError.noRootAtOrBefore(milliseconds: milliseconds) }
        return found
    }

    /// Moves the head back `steps` roots along its parents. Durable; O(steps), whatever the store size:
    /// it writes only a state record and the history entries it touches.
    /// - Returns: the new head.
    /// - Throws: ``StoreError/cannotUndo(steps:available:)`` when history runs out first.
    @discardableResult
    package func undo(steps: Int = 1) throws -> TransactionID {
        precondition(steps >= 1, "undo needs at least one step")
        return try changeHistory { transaction, trees in
            var current = transaction.base.head.transaction
            for step in 0..<steps {
                guard let entry = try trees.entry(current, reader: transaction), entry.historyParent != .none,
                    try trees.entry(entry.historyParent, reader: transaction) != nil
                else { throw StoreError.cannotUndo(steps: steps, available: step) }
                transaction.history.redoTargets.append((entry.historyParent, current))
                if entry.lineageParent != entry.historyParent { transaction.history.headMoveLeavesLineage = true }
                current = entry.historyParent
            }
            transaction.history.headMove = current
        }
    }

    /// Moves the head forward to its redo target. Durable; O(1) in store size.
    /// - Throws: ``StoreError/cannotRedo`` when the head has no retained redo target.
    @discardableResult
    package func redo() throws -> TransactionID {
        try changeHistory { transaction, trees in
            guard let entry = try trees.entry(transaction.base.head.transaction, reader: transaction),
                entry.redoTarget != .none, let target = try trees.entry(entry.redoTarget, reader: transaction)
            else { throw StoreError.cannotRedo }
            if target.lineageParent != target.historyParent { transaction.history.headMoveLeavesLineage = true }
            transaction.history.headMove = entry.redoTarget
        }
    }

    /// Commits a new root whose contents equal `root`'s. O(1): the new root points at that
    /// root's trees. The revert is itself a commit, so it can be undone.
    /// - Returns: the new root.
    @discardableResult
    package func revert(to root: TransactionID, label: String? = nil) throws -> TransactionID {
        try changeHistory(label: label) { transaction, trees in
            guard let entry = try trees.entry(root, reader: transaction) else { throw StoreError.rootNotRetained(root) }
            let record = try LoadedRoot(entry.rootPage, reader: transaction).record
            transaction.catalogTree = BTree(root: record.catalog, owner: .history)
            transaction.history.contentSource = root
            transaction.history.forceRoot = true
        }
    }

    /// Applies the retention policy to every root now. Returns how many roots were dropped.
    @discardableResult
    package func prune() throws -> Int {
        try pruneAll(mode: .exhaustive)
    }

    /// Drops every root except the head (and roots readers or snapshots hold, and in deferred
    /// mode the newest synced root, the crash fallback, until the next sync).
    @discardableResult
    package func clearHistory() throws -> Int {
        try pruneAll(mode: .clear)
    }

    /// Changes the retention policy (and optionally the undone-branch setting). Takes effect at
    /// the next commit or ``prune()``.
    package func setRetention(_ policy: RetentionPolicy, dropsUndoneBranches: Bool? = nil) throws {
        try policy.validate()
        _ = try changeHistory { transaction, _ in
            transaction.history.retention = policy
            transaction.history.dropsUndoneBranches = dropsUndoneBranches
            transaction.history.forceState = true
        }
    }

    private func pruneAll(mode: PruneMode) throws -> Int {
        let transaction = try beginWrite()
        transaction.history.pruneMode = mode
        transaction.history.forceState = true
        try transaction.commit()
        return transaction.prunedCount
    }

    /// Runs a history change in a write transaction and commits it.
    private func changeHistory(
        label: String? = nil, _ body: (WriteTransaction, HistoryTrees) throws -> Void
    ) throws -> TransactionID {
        let transaction = try beginWrite()
        transaction.label = label
        do {
            try body(transaction, HistoryTrees(state: transaction.base.state))
        } catch {
            transaction.abort()
            throw error
        }
        return try transaction.commit() ?? transaction.base.head.transaction
    }

    func pin(_ root: TransactionID) throws {
        try lock.withLock {
            pins[root, default: 0] += 1
            do { try advertiseLocked() } catch {
                pins[root, default: 1] -= 1
                if pins[root] == 0 { pins.removeValue(forKey: root) }
                throw error
            }
        }
    }
}
