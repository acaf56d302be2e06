// Pruning: dropping roots no longer retained and releasing the pages only they reached.

extension WriteTransaction {
    /// Drops the oldest roots that nothing retains any more, oldest first, at most
    /// `pruneBatchLimit` of them, and releases what only they reached.
    ///
    /// Retention for now keeps the head, and every root from the oldest pinned one onwards
    /// (pinned by a reader in any process, or by the durable fallback state). Dropping root `o`,
    /// whose successor is `n`, releases `o`'s own page and list chunks, and the pages on `n`'s
    /// deadlist: those were born at or before `o` and replaced by `n`, so no retained root
    /// reaches them. The cost is O(pages released).
    /// - Returns: the new tail (oldest retained root) and how many roots were dropped.
    func pruneRoots(history: inout BTree, limit: Int) throws -> (tail: TransactionID, prunedCount: Int) {
        let keepFrom = min(allocator.pinnedRoots.oldest ?? transaction, transaction)
        var tail = base.state.tail
        var pruned = 0
        while tail < keepFrom, pruned < limit {
            guard let value = try history.lookup(HistoryIndex.key(tail), reader: self) else {
                throw StoreError.malformedPage(page: history.root.page, reason: "history index lacks the tail root \(tail.rawValue)")
            }
            let dropped = try LoadedRoot(try HistoryIndex.rootPage(from: value, page: history.root.page), reader: self)
            let successor = try successorRoot(of: tail, in: history)
            // Pages the successor replaced: reachable only from roots up to `tail`.
            let replaced: [PageReference]
            if let successor {
                replaced = try LoadedRoot(successor.page, reader: self).invalidatedPages(reader: self)
            } else {
                replaced = invalidated  // the successor is the root this transaction commits
            }
            for page in replaced { allocator.released.append(page.page) }
            for page in try dropped.metadataPages(reader: self) { allocator.released.append(page.page) }
            _ = try history.remove(HistoryIndex.key(tail), editor: self)
            tail = successor?.root ?? transaction
            pruned += 1
        }
        return (tail, pruned)
    }

    /// The next root after `root` in the history index, if any.
    private func successorRoot(of root: TransactionID, in history: BTree) throws -> (root: TransactionID, page: PageReference)? {
        var found: (TransactionID, PageReference)?
        let range = KeyRange(lower: KeyBound(HistoryIndex.key(root), inclusive: false))
        try history.scan(range, reverse: false, reader: self) { key, value in
            found = (HistoryIndex.root(of: key), try HistoryIndex.rootPage(from: value, page: history.root.page))
            return false
        }
        return found
    }
}
