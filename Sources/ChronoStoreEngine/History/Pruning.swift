// Pruning: dropping roots retention no longer keeps, and freeing exactly the pages only they reached.

/// Roots that must stay: the new head, roots open readers read (in any process), the durable
/// fallback state's head, and (later) snapshots.
package struct PinnedRoots: Sendable {
    package var roots: Set<TransactionID> = []
    /// Another process reads a root this old or newer: keep every root from here on.
    package var everythingFrom: TransactionID?

    func contains(_ root: TransactionID) -> Bool {
        if let everythingFrom, root >= everythingFrom { return true }
        return roots.contains(root)
    }

    var oldest: TransactionID? {
        [roots.min(), everythingFrom].compactMap { $0 }.min()
    }
}

/// How much pruning a transaction does.
enum PruneMode: Equatable {
    /// After a commit: examine at most `limit` history entries, resuming where the last stopped.
    case automatic(limit: Int)
    /// ``Store/prune()``: apply the retention policy to every root.
    case exhaustive
    /// ``Store/clearHistory()``: drop every root that is not the head or pinned.
    case clear
    /// Head moves (undo, redo) prune nothing.
    case none
}

/// Lifetime bookkeeping (see Docs/RootChain.md). Retained roots form a *lineage tree*: each
/// root's lineage parent is the nearest retained root its trees were derived from. Each root
/// carries two lists relative to that parent: the dead list (pages alive at the parent that
/// died on the way here) and the new list (pages born on the way here and alive here). Then:
///
/// - dropping a root with no retained children frees its new list;
/// - dropping the oldest root (no parent) with one child frees that child's dead list;
/// - dropping a root in the middle (one child) frees the pages of its new list that the child's
///   dead list holds, and merges its lists into the child's;
/// - a root with several children (a fork point) is kept until one branch is left.
///
/// The first two, the common cases (a side branch tip, the oldest root of a linear history),
/// cost O(pages freed); the merge costs O(the lists involved).
extension WriteTransaction {
    /// Prunes per `mode` and the retention policy; returns how many roots were dropped and where
    /// automatic pruning should resume.
    func pruneHistory(
        _ trees: inout HistoryTrees, head: HistoryEntry, policy: RetentionPolicy, mode: PruneMode
    ) throws -> (prunedCount: Int, cursor: TransactionID) {
        if mode == .none { return (0, base.state.pruneCursor) }
        // Under limitless retention nothing expires; only pins and clearHistory matter.
        if policy == .limitless, case .automatic = mode { return (0, base.state.pruneCursor) }
        let now = Clock.nowMilliseconds()
        if case .automatic(let limit) = mode {
            // The oldest roots, up to the first one the policy still keeps: one scan, and no
            // work at all while nothing has expired.
            var candidates: [TransactionID] = []
            try trees.entries.scan(.all, reverse: false, reader: self) { _, value in
                let entry = try HistoryEntry.decode(value, page: trees.entries.root.page)
                guard isExpired(entry, head: head, policy: policy, now: now) else { return false }
                candidates.append(entry.root)
                return candidates.count < limit
            }
            var pruned = 0
            for id in candidates {
                // Re-read: pruning an earlier candidate may have merged lists into this one.
                guard let entry = try trees.entry(id, reader: self) else { continue }
                if shouldPrune(entry, head: head, policy: policy, mode: mode, now: now), try pruneRoot(entry, &trees) {
                    pruned += 1
                }
            }
            return (pruned, .none)
        }
        // Exhaustive: repeat passes, since a fork point is visited before the branches whose
        // dropping frees it.
        var pruned = 0
        while true {
            var prunedThisPass = 0
            var cursor = TransactionID.none
            while let entry = try nextEntry(after: cursor, in: trees) {
                cursor = entry.root
                if shouldPrune(entry, head: head, policy: policy, mode: mode, now: now), try pruneRoot(entry, &trees) {
                    prunedThisPass += 1
                }
            }
            pruned += prunedThisPass
            if prunedThisPass == 0 { return (pruned, .none) }
        }
    }

    private func nextEntry(after cursor: TransactionID, in trees: HistoryTrees) throws -> HistoryEntry? {
        var found: HistoryEntry?
        let range = KeyRange(lower: KeyBound(HistoryIndex.key(cursor), inclusive: false))
        try trees.entries.scan(range, reverse: false, reader: self) { _, value in
            found = try HistoryEntry.decode(value, page: trees.entries.root.page)
            return false
        }
        return found
    }

    private func shouldPrune(
        _ entry: HistoryEntry, head: HistoryEntry, policy: RetentionPolicy, mode: PruneMode, now: Int64
    ) -> Bool {
        if entry.root == head.root || allocator.pinnedRoots.contains(entry.root) { return false }
        if mode == .clear { return true }
        return isExpired(entry, head: head, policy: policy, now: now)
    }

    /// Whether the retention policy alone lets `entry` go (pins and fork points aside).
    private func isExpired(_ entry: HistoryEntry, head: HistoryEntry, policy: RetentionPolicy, now: Int64) -> Bool {
        if entry.root == head.root { return false }
        switch policy {
        case .limitless:
            return false
        case .lastRoots(let count):
            return entry.depth + UInt64(max(count, 1)) <= head.depth
        case .days(let days):
            return entry.timeMilliseconds < now - Int64(days) * 86_400_000
        }
    }

    /// Drops every unpinned root in the lineage subtree of `root` (an undone branch), tips first.
    func dropBranch(from root: TransactionID, _ trees: inout HistoryTrees) throws -> Int {
        var subtree: [TransactionID] = []
        var frontier = [root]
        while let next = frontier.popLast() {
            subtree.append(next)
            frontier.append(contentsOf: try trees.lineageChildren(of: next, reader: self))
        }
        var dropped = 0
        for id in subtree.sorted(by: >) where !allocator.pinnedRoots.contains(id) {
            guard let entry = try trees.entry(id, reader: self) else { continue }
            if try pruneRoot(entry, &trees) { dropped += 1 }
        }
        return dropped
    }

    /// Drops one root. Returns false (and changes nothing) for a root with several lineage
    /// children: a fork point stays until all but one of its branches are gone, because pages it
    /// shares with several branches cannot be given to any one of them.
    func pruneRoot(_ entry: HistoryEntry, _ trees: inout HistoryTrees) throws -> Bool {
        let children = try trees.lineageChildren(of: entry.root, reader: self)
        guard children.count <= 1 else { return false }
        var freed: [PageReference] = []
        if children.isEmpty {
            freed = entry.lineageParent == .none ? try allTreePages(of: entry) : try newList(of: entry)
        } else if entry.lineageParent == .none {
            guard var child = try trees.entry(children[0], reader: self) else {
                throw StoreError.malformedPage(page: trees.lineage.root.page, reason: "lineage names a missing root \(children[0].rawValue)")
            }
            freed = try deadList(of: child)
            try releaseHistoryLists(of: child)
            child.deadList = .empty
            child.newList = .empty
            child.deadListIsRootOwned = false
            child.newListIsRootOwned = false
            child.lineageParent = .none
            try trees.relink(child: child.root, from: entry.root, to: .none, editor: self)
            try trees.setEntry(child, editor: self)
        } else {
            freed = try mergeIntoChild(entry, children[0], &trees)
        }
        for page in freed { allocator.released.append(page.page) }
        for page in try LoadedRoot(entry.rootPage, reader: self).metadataPages(reader: self) {
            releasePage(page, owner: .system)
        }
        try releaseHistoryLists(of: entry)
        try trees.remove(entry, editor: self)
        return true
    }

    /// The middle case: frees what the child's path killed of the pages born since the parent,
    /// and merges the dropped root's lists into the child's.
    private func mergeIntoChild(
        _ entry: HistoryEntry, _ childID: TransactionID, _ trees: inout HistoryTrees
    ) throws -> [PageReference] {
        guard var child = try trees.entry(childID, reader: self) else {
            throw StoreError.malformedPage(page: trees.lineage.root.page, reason: "lineage names a missing root \(childID.rawValue)")
        }
        let droppedNew = try newList(of: entry)
        let droppedNewSet = Set(droppedNew)
        let childDead = try deadList(of: child)
        let childDeadSet = Set(childDead)
        // Born after the parent and killed on the way to the child: nothing retained reaches them.
        let freed = droppedNew.filter { childDeadSet.contains($0) }
        // The child's lists become relative to the dropped root's parent.
        let mergedDead = try deadList(of: entry) + childDead.filter { !droppedNewSet.contains($0) }
        let mergedNew = try newList(of: child) + droppedNew.filter { !childDeadSet.contains($0) }
        try releaseHistoryLists(of: child)
        child.deadList = try writeHistoryList(mergedDead)
        child.newList = try writeHistoryList(mergedNew)
        child.deadListIsRootOwned = false
        child.newListIsRootOwned = false
        child.lineageParent = entry.lineageParent
        try trees.relink(child: child.root, from: entry.root, to: entry.lineageParent, editor: self)
        try trees.setEntry(child, editor: self)
        return freed
    }

    // MARK: - Lists

    func deadList(of entry: HistoryEntry) throws -> [PageReference] { try entry.deadPages(reader: self) }

    func newList(of entry: HistoryEntry) throws -> [PageReference] { try entry.newPages(reader: self) }

    /// Writes a list owned by the history index, as chunk pages born in this transaction.
    private func writeHistoryList(_ entries: [PageReference]) throws -> ListDescriptor {
        guard !entries.isEmpty else { return .empty }
        var pages: [PageID] = []
        for _ in 0..<PageList.chunkCount(for: entries.count, pageSize: pageSize) { pages.append(try takeFreePage()) }
        let (descriptor, chunks) = PageList.makeChunks(entries, on: pages, birth: transaction, pageSize: pageSize)
        for (page, buffer, count) in chunks { setDirty(page, .raw(buffer, kind: .listChunk, count: count)) }
        return descriptor
    }

    /// Releases the chunk pages of an entry's merged lists (root-owned lists go with the root page).
    private func releaseHistoryLists(of entry: HistoryEntry) throws {
        for (list, rootOwned) in [(entry.deadList, entry.deadListIsRootOwned), (entry.newList, entry.newListIsRootOwned)]
        where !rootOwned && !list.isInline {
            var chunks: [PageReference] = []
            try PageList.forEachChunk(list, reader: self) { chunks.append($0.reference) }
            for chunk in chunks { releasePage(chunk, owner: .system) }
        }
    }

    /// Every page of a root's trees: what an isolated root (no lineage parent or child) frees.
    private func allTreePages(of entry: HistoryEntry) throws -> [PageReference] {
        let root = try LoadedRoot(entry.rootPage, reader: self)
        var pages: [PageReference] = []
        try TreePages.forEach(in: root.record.catalog, reader: self) { page, _ in pages.append(page) }
        let catalog = BTree(root: root.record.catalog, owner: .history)
        var collections: [PageReference] = []
        try catalog.scan(.all, reverse: false, reader: self) { _, value in
            collections.append(try CollectionEntry.decode(value, page: catalog.root.page).root)
            return true
        }
        for collection in collections {
            try TreePages.forEach(in: collection, reader: self) { page, _ in pages.append(page) }
        }
        return pages
    }
}
