// The history listing, a page at a time: the head's line or every retained root, newest first.

extension Store {
    /// The retained roots, newest first: the head and its retained history ancestors, or every
    /// retained root by descending id (`allBranches`).
    ///
    /// - Parameters:
    ///   - limit: list at most this many roots (nil: all of them).
    ///   - before: continue a listing after this root. On the head's line: this root's history
    ///     ancestors (the rest of the listing when it is the last root of the previous page).
    ///     With `allBranches`: the retained roots with smaller ids.
    /// - Returns: the first `limit` items of what the whole listing would return after `before`,
    ///   in the same shape.
    /// - Throws: ``StoreError/rootNotRetained(_:)`` when `before` is not retained (head's line).
    /// - Complexity: O(L log R + S) for L roots listed of R retained and S snapshots (their names
    ///   are looked up once), plus one root page read per root listed.
    package func history(allBranches: Bool = false, limit: Int? = nil, before: TransactionID? = nil) throws -> [HistoryItem] {
        let reader = try beginRead()
        defer { reader.close() }
        let trees = HistoryTrees(state: reader.snapshot.state)
        let head = reader.snapshot.head.transaction
        let count = max(limit ?? Int.max, 0)
        let entries =
            allBranches
            ? try Self.newestEntries(trees, count: count, below: before, reader: reader.treeReader)
            : try Self.lineEntries(trees, count: count, from: before ?? head, skippingFirst: before != nil, reader: reader.treeReader)
        guard !entries.isEmpty else { return [] }
        var snapshotNames: [TransactionID: [String]] = [:]
        for info in try SnapshotTree.all(reader.snapshot.state.snapshots, reader: reader.treeReader) {
            snapshotNames[info.root, default: []].append(info.name)
        }
        // Roots some retained root was committed on, built once when the quick test cannot tell.
        var historyParents: Set<TransactionID>?
        return try entries.map { entry in
            let root = try LoadedRoot(entry.rootPage, reader: reader.historicReader).record
            let redo = try trees.entry(entry.redoTarget, reader: reader.treeReader)
            var isBranchTip = false
            if allBranches, entry.root != head, try !Self.hasHistoryChild(entry, redo: redo, trees: trees, reader: reader.treeReader) {
                // A revert or restore committed on this root is neither its lineage child nor,
                // after later undos and commits, its redo target: look at every retained root.
                if historyParents == nil { historyParents = try Self.allHistoryParents(trees, reader: reader.treeReader) }
                isBranchTip = !historyParents!.contains(entry.root)
            }
            return HistoryItem(
                id: entry.root, parent: entry.historyParent == .none ? nil : entry.historyParent,
                timeMilliseconds: entry.timeMilliseconds, label: root.label,
                pagesChanged: root.invalidated.count + root.introduced.count, isHead: entry.root == head,
                isBranchTip: isBranchTip, revertedTo: root.contentSource == .none ? nil : root.contentSource,
                redoTarget: redo?.root, snapshots: snapshotNames[entry.root] ?? [])
        }
    }

    /// Every retained root with an id below `limit` (all when nil), newest first, at most `count`.
    private static func newestEntries(
        _ trees: HistoryTrees, count: Int, below limit: TransactionID?, reader: some TreeReading
    ) throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        guard count > 0 else { return entries }
        let range = limit.map { KeyRange(upper: KeyBound(HistoryIndex.key($0), inclusive: false)) } ?? .all
        try trees.entries.scan(range, reverse: true, reader: reader) { key, value in
            entries.append(try HistoryEntry.decode(value, page: trees.entries.page(of: key)))
            return entries.count < count
        }
        return entries
    }

    /// `start` and its retained history ancestors (without `start` when `skippingFirst`), at most
    /// `count`; the walk ends at the first history parent no longer retained.
    private static func lineEntries(
        _ trees: HistoryTrees, count: Int, from start: TransactionID, skippingFirst: Bool, reader: some TreeReading
    ) throws -> [HistoryEntry] {
        guard let first = try trees.entry(start, reader: reader) else { throw StoreError.rootNotRetained(start) }
        var entries = skippingFirst ? [] : [first]
        var cursor = first.historyParent
        while entries.count < count, cursor != .none, let entry = try trees.entry(cursor, reader: reader) {
            entries.append(entry)
            cursor = entry.historyParent
        }
        return Array(entries.prefix(count))
    }

    /// The history parents of every retained root. O(R).
    private static func allHistoryParents(_ trees: HistoryTrees, reader: some TreeReading) throws -> Set<TransactionID> {
        var parents = Set<TransactionID>()
        try trees.entries.scan(.all, reverse: false, reader: reader) { key, value in
            parents.insert(try HistoryEntry.decode(value, page: trees.entries.page(of: key)).historyParent)
            return true
        }
        return parents
    }

    /// Whether a retained root was committed on `entry`. A commit on it is its lineage child; a
    /// revert or restore committed on it derives its trees from elsewhere, but the root a commit
    /// was last made on (or undone from) is its redo target. O(log R + lineage children).
    private static func hasHistoryChild(
        _ entry: HistoryEntry, redo: HistoryEntry?, trees: HistoryTrees, reader: some TreeReading
    ) throws -> Bool {
        if let redo, redo.historyParent == entry.root { return true }
        for child in try trees.lineageChildren(of: entry.root, reader: reader) {
            if try trees.entry(child, reader: reader)?.historyParent == entry.root { return true }
        }
        return false
    }
}
