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
    /// - Returns: the timeline's root and record count for the state.
    func updateHeadTimeline(
        _ trees: HistoryTrees, head: HistoryEntry, policy: RetentionPolicy
    ) throws -> (root: PageReference, count: UInt64) {
        var timeline = HeadTimeline(root: base.state.headTimeline, count: base.state.headTimelineCount)
        if history.importedRoot != nil || !history.dropRoots.isEmpty {
            return (timeline.tree.root, timeline.count)
        }
        let now = store.options.clock.nowMilliseconds()
        let oldHead = base.head.transaction
        if head.root != oldHead {
            if timeline.tree.root.isNone { try seed(&timeline, from: trees) }
            if history.replacesHead, try trees.entry(oldHead, reader: self) == nil {
                try timeline.rename(oldHead, to: head.root, editor: self)
            }
            // A commit happened at its root's time; a move of the head (undo, redo) happens now.
            let time = head.root == transaction ? head.timeMilliseconds : now
            try timeline.record(head.root, at: time, transaction: transaction, editor: self)
        }
        guard !timeline.tree.root.isNone else { return (timeline.tree.root, timeline.count) }
        try timeline.trim(
            policy: policy, clear: history.pruneMode == .clear, nowMilliseconds: now,
            isRetained: { try trees.entry($0, reader: self) != nil }, editor: self)
        return (timeline.tree.root, timeline.count)
    }

    /// Fills an empty timeline from the time index (as of the base state): each retained root
    /// becomes the head at its commit time. O(retained roots), once per store.
    private func seed(_ timeline: inout HeadTimeline, from trees: HistoryTrees) throws {
        let baseTimes = BTree(root: base.state.timeIndex, owner: .system)
        var records: [(Int64, TransactionID)] = []
        try baseTimes.scan(.all, reverse: false, reader: self) { key, _ in
            records.append((Int64(clamping: IndexKey.first(of: key)), TransactionID(IndexKey.second(of: key))))
            return true
        }
        for (milliseconds, root) in records {
            if try trees.entry(root, reader: self) == nil { continue }
            try timeline.record(root, at: milliseconds, transaction: root, editor: self)
        }
        // The base head is the head from the base state on, whatever its commit time.
        if let newest = try timeline.newest(reader: self), newest.root != base.head.transaction {
            let time = Int64(clamping: newest.milliseconds)
            try timeline.record(base.head.transaction, at: time, transaction: base.transaction, editor: self)
        }
    }
}
