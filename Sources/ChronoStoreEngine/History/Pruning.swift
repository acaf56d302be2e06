// Pruning: dropping roots retention no longer keeps, and freeing exactly the pages only they reached.

/// Roots that must stay: the new head, roots open readers read (in any process), the durable
/// fallback state's head, and snapshots' roots.
package struct PinnedRoots: Sendable {
    package var roots: Set<TransactionID> = []
    /// Another process reads a root this old or newer: keep every root from here on.
    package var everythingFrom: TransactionID?
    /// How many snapshots pin each root (shared with the store's cache, so assigning it is O(1)).
    var snapshots: [TransactionID: Int] = [:]

    func contains(_ root: TransactionID) -> Bool {
        snapshots[root] != nil || isHeldWhileOpen(root)
    }

    /// Pinned by something that goes away without a commit: a reader, another process, the
    /// durable fallback head. Pruning cannot move its cursor past such a root.
    func isHeldWhileOpen(_ root: TransactionID) -> Bool {
        if let everythingFrom, root >= everythingFrom { return true }
        return roots.contains(root)
    }

    var oldest: TransactionID? {
        [roots.min(), everythingFrom, snapshots.keys.min()].compactMap { $0 }.min()
    }
}

/// How much pruning a transaction does.
enum PruneMode: Equatable {
    /// After a commit: drop at most `limit` expired roots, resuming at the prune cursor.
    case automatic(limit: Int)
    /// ``Store/prune()``: apply the retention policy to every root.
    case exhaustive
    /// ``Store/clearHistory()``: drop every root that is not the head or pinned.
    case clear
    /// Head moves (undo, redo) and snapshot edits prune nothing but the roots they released.
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
        var rule = RetentionRule(head: head, policy: policy, nowMilliseconds: store.options.clock.nowMilliseconds())
        // Roots left behind by earlier commits: their readers may have let go since.
        rootsLeftBehind.formUnion(store.pruningMemory.rootsLeftBehind)
        rootsToRevisit.formUnion(rootsLeftBehind)
        var pruned = 0
        var cursor = base.state.pruneCursor
        // Clearing by complement rewrites the versions the head reads from pack entries whole;
        // nil (the general path, which keeps the roots such a version still needs) when it may not
        // run or one of them is too large for a pack page whole.
        let complementKeyframes = mode == .clear && clearsByComplement(head: head) ? try keyframesOfThePackedPagesOfTheHead(head) : nil
        switch (mode, complementKeyframes) {
        case (.none, _):
            break
        case (.automatic(let limit), _):
            (pruned, cursor) = try pruneExpiredRoots(&trees, rule: rule, limit: max(limit, 1), from: cursor)
        case (.clear, let keyframes?):
            pruned = try clearByComplement(&trees, head: head, keyframes: keyframes)
            cursor = .none
        case (.exhaustive, _), (.clear, nil):
            trees.beginBatch()
            pruned = try pruneEveryRoot(&trees, rule: &rule, mode: mode)
            try trees.applyBatch(keyCount: base.state.retainedRootCount, editor: self)
            cursor = .none
        }
        // Roots whose reason to stay went in this commit: fork points that lost a branch, roots
        // of deleted snapshots. They may lie behind the cursor, so look at them here; one the
        // policy or a reader still keeps moves the cursor back to it.
        while let id = rootsToRevisit.popFirst() {
            guard let entry = try trees.entry(id, reader: self) else {
                rootsLeftBehind.remove(id)
                continue
            }
            if try shouldPrune(entry, rule: &rule, mode: mode, trees: trees) {
                if try pruneRoot(entry, &trees) {
                    pruned += 1
                    rootsLeftBehind.remove(id)
                }
            } else if id < cursor, allocator.pinnedRoots.snapshots[id] == nil {
                // Kept for now (by the policy, as the head, or by a reader): the walk must meet it
                // again once that changes.
                cursor = id
            }
        }
        return (pruned, cursor)
    }

    /// Automatic pruning: walks the roots in commit order from the cursor, dropping expired roots
    /// until one the policy keeps, or `limit` drops. Snapshot roots and fork points are stepped
    /// over without counting against the limit, and the cursor moves past them, so no later
    /// commit looks at them again (a deleted snapshot or a fork point that loses a branch is
    /// revisited directly). A root a reader holds is stepped over too, but the cursor stays
    /// before it, since the reader may let it go without a commit.
    private func pruneExpiredRoots(
        _ trees: inout HistoryTrees, rule: RetentionRule, limit: Int, from start: TransactionID
    ) throws -> (prunedCount: Int, cursor: TransactionID) {
        var rule = rule
        let pinned = allocator.pinnedRoots
        var cursor = start
        var cursorHeld = false
        var pruned = 0
        var position = start
        var more = true
        while pruned < limit, more, let entry = try entry(atOrAfter: position, in: trees) {
            (position, more) = Self.step(past: entry, from: position)
            // Another process holds every root from here on.
            if let everythingFrom = pinned.everythingFrom, entry.root >= everythingFrom { break }
            if pinned.snapshots[entry.root] == nil {
                // Ages grow along commit order, so the first root the policy keeps ends the walk
                // (a root left behind by a dropped branch is not on that order). Under `lastRoots`
                // that holds only on the undo line: a root off it, such as the source of a revert
                // that is also a fork point, can be less deep than the roots after it, and ending
                // the walk there kept an expired root beyond the bound (RetentionBoundTests, seed
                // 7691883625548705160). So a root that does not look like a link of the undo line
                // gets the policy's full test (the window, computed once a commit), and the walk
                // goes on past it when that says expired.
                if !(entry.isLeftBehind || rule.isExpiredByAge(entry)) {
                    guard case .lastRoots = rule.policy, try !mayBeOnUndoLine(entry, head: rule.head, trees: trees),
                        try rule.isExpired(entry, trees: trees, reader: self)
                    else { break }
                }
                if pinned.isHeldWhileOpen(entry.root) {
                    cursorHeld = true
                } else if try pruneRoot(entry, &trees) {
                    pruned += 1
                }
            }
            if !cursorHeld { cursor = position }
        }
        return (pruned, cursor)
    }

    /// Whether `entry` may be a root of the head's undo line, cheaply: a root of it other than the
    /// head normally has its child on the line as redo target (commits, undo and redo keep it
    /// so). True lets the walk stop there as before; false only sends the root to the policy's
    /// full test, so a line root whose redo target is not retained (should one arise) costs a
    /// window computation, never a wrong drop.
    private func mayBeOnUndoLine(_ entry: HistoryEntry, head: HistoryEntry, trees: HistoryTrees) throws -> Bool {
        if entry.root == head.root { return true }
        guard entry.redoTarget != .none, let next = try trees.entry(entry.redoTarget, reader: self) else { return false }
        return next.historyParent == entry.root
    }

    /// Where a walk over the history index goes after `entry`, found at or after `position`:
    /// strictly forward, whatever a damaged entry says its root is (its key found it; the entry's
    /// own field may name an earlier root, or the last id there is), and nowhere (false) after
    /// the last id.
    private static func step(past entry: HistoryEntry, from position: TransactionID) -> (TransactionID, Bool) {
        let reached = max(entry.root.rawValue, position.rawValue)
        return (TransactionID(reached &+ 1), reached < UInt64.max)
    }

    /// `prune()` and `clearHistory()`: passes over every root until one drops nothing (a fork
    /// point is visited before the branches whose dropping frees it). Every pass but the last
    /// drops a root, so there are at most as many passes as the first one visited roots, plus one;
    /// more means a damaged index that keeps roots pruning dropped, an error rather than a hang.
    private func pruneEveryRoot(_ trees: inout HistoryTrees, rule: inout RetentionRule, mode: PruneMode) throws -> Int {
        var pruned = 0
        var passes = 0
        var rootsAtFirst: Int?
        while true {
            var prunedThisPass = 0
            var visited = 0
            var position = TransactionID.none
            var more = true
            while more, let entry = try entry(atOrAfter: position, in: trees) {
                (position, more) = Self.step(past: entry, from: position)
                visited += 1
                if try shouldPrune(entry, rule: &rule, mode: mode, trees: trees), try pruneRoot(entry, &trees) {
                    prunedThisPass += 1
                }
            }
            pruned += prunedThisPass
            if prunedThisPass == 0 { return pruned }
            passes += 1
            if rootsAtFirst == nil { rootsAtFirst = visited }
            if let rootsAtFirst, passes > rootsAtFirst + 1 {
                throw StoreError.malformedPage(
                    page: trees.entries.root.page, reason: "pruning does not converge: the history index keeps roots it dropped")
            }
        }
    }

    /// The retained root with the smallest id at or after `position`. O(log roots).
    private func entry(atOrAfter position: TransactionID, in trees: HistoryTrees) throws -> HistoryEntry? {
        var found: HistoryEntry?
        let range = KeyRange(lower: KeyBound(HistoryIndex.key(position), inclusive: true))
        try trees.entries.scan(range, reverse: false, reader: self) { key, value in
            // Roots a batch removed or edited are looked up through it.
            if let pending = trees.pending, let edited = pending.entries[HistoryIndex.root(of: key)] {
                found = edited
                return edited == nil
            }
            found = try HistoryEntry.decode(value, page: trees.entries.page(of: key))
            return false
        }
        return found
    }

    private func shouldPrune(
        _ entry: HistoryEntry, rule: inout RetentionRule, mode: PruneMode, trees: HistoryTrees
    ) throws -> Bool {
        if entry.root == rule.head.root || allocator.pinnedRoots.contains(entry.root) { return false }
        if mode == .clear || entry.isLeftBehind { return true }
        return try rule.isExpired(entry, trees: trees, reader: self)
    }

    /// Drops every unpinned root of an undone branch starting at `root`: its lineage subtree and
    /// the redo chain from it (a revert made in the branch derives its trees from elsewhere, but
    /// its redo link still ties it to the branch), newest first so each is a tip when dropped.
    func dropBranch(from root: TransactionID, _ trees: inout HistoryTrees) throws -> Int {
        var subtree: Set<TransactionID> = []
        var frontier = [root]
        while let next = frontier.popLast() {
            guard subtree.insert(next).inserted, let entry = try trees.entry(next, reader: self) else { continue }
            frontier.append(contentsOf: try trees.lineageChildren(of: next, reader: self))
            if entry.redoTarget != .none, let target = try trees.entry(entry.redoTarget, reader: self),
                target.historyParent == next
            {
                frontier.append(target.root)
            }
        }
        var dropped = 0
        for id in subtree.sorted(by: >) {
            guard var entry = try trees.entry(id, reader: self) else { continue }
            if allocator.pinnedRoots.contains(id) {
                // Kept only by its pin: marked, so pruning drops it once the pin goes.
                if id != transaction, !entry.isLeftBehind {
                    entry.isLeftBehind = true
                    try trees.setEntry(entry, editor: self)
                }
                if id != transaction { rootsLeftBehind.insert(id) }
            } else if try pruneRoot(entry, &trees) {
                dropped += 1
            }
        }
        return dropped
    }

    /// Drops one root. Returns false (and changes nothing but, possibly, packed entries rewritten
    /// whole) for a root with several lineage children: a fork point stays until all but one of
    /// its branches are gone, because pages it shares with several branches cannot be given to any
    /// one of them; and, rarely, for a root whose new pages are the bases of packed pages that fit
    /// a pack page neither whole nor against a replacement (see `rebaseDependants`).
    func pruneRoot(_ entry: HistoryEntry, _ trees: inout HistoryTrees) throws -> Bool {
        let children = try trees.lineageChildren(of: entry.root, reader: self)
        guard children.count <= 1 else { return false }
        // Packed pages whose bases go with this root are rewritten first; in the rare case one
        // cannot be (see `rebaseDependants`), the root stays until a later prune.
        guard try rebaseRootDependant(of: entry, trees) else { return false }
        var freed: [PageReference] = []
        if children.isEmpty {
            freed = entry.lineageParent == .none ? try allTreePages(of: entry) : try newList(of: entry)
            if entry.lineageParent != .none {
                guard try rebaseDependants(of: freed, deadList: try deadList(of: entry)) else { return false }
                // The parent lost a branch: a fork point it may have been is prunable now.
                rootsToRevisit.insert(entry.lineageParent)
            }
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
            guard let merged = try mergeIntoChild(entry, children[0], &trees) else { return false }
            freed = merged
        }
        for page in freed { try freeHistoryPage(page) }
        for page in try LoadedRoot(entry.rootPage, reader: self).metadataPages(reader: self) {
            try freeHistoryPage(page)
        }
        try releaseHistoryLists(of: entry)
        try trees.remove(entry, editor: self)
        return true
    }

    /// The middle case: frees what the child's path killed of the pages born since the parent,
    /// and merges the dropped root's lists into the child's.
    private func mergeIntoChild(
        _ entry: HistoryEntry, _ childID: TransactionID, _ trees: inout HistoryTrees
    ) throws -> [PageReference]? {
        guard var child = try trees.entry(childID, reader: self) else {
            throw StoreError.malformedPage(page: trees.lineage.root.page, reason: "lineage names a missing root \(childID.rawValue)")
        }
        let droppedNew = try newList(of: entry)
        let droppedNewSet = Set(droppedNew)
        let childDead = try deadList(of: child)
        let childDeadSet = Set(childDead)
        // Born after the parent and killed on the way to the child: nothing retained reaches them.
        let freed = droppedNew.filter { childDeadSet.contains($0) }
        guard try rebaseDependants(of: freed, deadList: try deadList(of: entry), replacements: try newList(of: child)) else { return nil }
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
