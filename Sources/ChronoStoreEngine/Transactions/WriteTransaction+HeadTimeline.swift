// Commit step: record a head change in the head timeline and drop the records retention let go.

extension WriteTransaction {
    /// Records in the head timeline that `head` is the head from this commit on, and trims the
    /// timeline to what retention keeps. Runs after pruning, so records naming roots this commit
    /// dropped are trimmed with them.
    ///
    /// - A store whose timeline is empty (new, or written by a library without one) first gets one
    ///   record per retained root at its commit time: what reads by date answered before.
    /// - A root copied in from a backup's history records nothing: the timeline stays empty and
    ///   reads by date use commit times until the store's head first changes here.
    /// - A compaction root that took the head's place takes over the head's records.
    /// - Returns: the timeline (its pages, journal and record count) for the state.
    func updateHeadTimeline(
        _ trees: HistoryTrees, head: HistoryEntry, policy: RetentionPolicy
    ) throws -> HeadTimeline {
        var timeline = HeadTimeline(state: base.state)
        if history.importedRoot != nil || !history.dropRoots.isEmpty { return timeline }
        let now = store.options.clock.nowMilliseconds()
        let oldHead = base.head.transaction
        if head.root != oldHead {
            if timeline.tree.isAbsent { try seed(&timeline, from: trees) }
            if history.replacesHead, try trees.entry(oldHead, reader: self) == nil {
                try timeline.rename(oldHead, to: head.root, editor: self)
            }
            // A commit happened at its root's time; a move of the head (undo, redo) happens now.
            let time = head.root == transaction ? head.timeMilliseconds : now
            try timeline.record(head.root, at: time, transaction: transaction, editor: self)
        }
        guard !timeline.tree.isAbsent else { return timeline }
        try timeline.trim(
            policy: policy, clear: history.pruneMode == .clear, nowMilliseconds: now,
            isRetained: { try trees.entry($0, reader: self) != nil }, editor: self)
        return timeline
    }

    /// Fills an empty timeline from the time index (as of the base state): each retained root
    /// becomes the head at its commit time. One bulk build: O(retained roots), once per store.
    private func seed(_ timeline: inout HeadTimeline, from trees: HistoryTrees) throws {
        let baseTimes = JournaledTree(root: base.state.timeIndex, journal: base.state.journal.timeIndex)
        var records: [([UInt8], LeafValue)] = []
        var newest: (milliseconds: Int64, root: TransactionID)?
        try baseTimes.scan(.all, reverse: false, reader: self) { key, _ in
            let root = TransactionID(IndexKey.second(of: key))
            // Roots this commit pruned are not seeded; the time index is in (time, root) order.
            guard try trees.entry(root, reader: self) != nil else { return true }
            let milliseconds = Int64(clamping: IndexKey.first(of: key))
            records.append((HeadTimeline.key(milliseconds: milliseconds, transaction: root), HeadTimeline.value(root)))
            newest = (milliseconds, root)
            return true
        }
        // The base head is the head from the base state on, whatever its commit time.
        if let newest, newest.root != base.head.transaction {
            let key = HeadTimeline.key(milliseconds: newest.milliseconds, transaction: base.transaction)
            records.append((key, HeadTimeline.value(base.head.transaction)))
        }
        timeline.tree.replace(root: try BTree.build(from: records, owner: .system, editor: self))
        timeline.count = UInt64(records.count)
    }
}
