// What the retention policy keeps, as one write transaction sees it: by depth, by age, or all.

/// The retention policy applied to one head at one instant (see Docs/RootChain.md, "Retention").
///
/// - `lastRoots(N)` keeps the **undo window**, the head and its N − 1 nearest history ancestors,
///   and the head's **redo chain**, the roots repeated `redo()` reaches. Every other root has
///   expired: older ancestors and every side branch.
/// - `days(N)` keeps the roots whose recorded commit time is within N days of now.
/// - `limitless` keeps everything.
///
/// The head itself never expires. Pins (snapshots, readers) and fork points are the pruner's
/// business, not the policy's.
struct RetentionRule {
    let head: HistoryEntry
    let policy: RetentionPolicy
    let nowMilliseconds: Int64
    /// Under `lastRoots`: the undo window and the redo chain, computed on first use.
    private var kept: Set<TransactionID>?

    init(head: HistoryEntry, policy: RetentionPolicy, nowMilliseconds: Int64) {
        self.head = head
        self.policy = policy
        self.nowMilliseconds = nowMilliseconds
    }

    /// The test automatic pruning uses while it walks roots in commit order: depth alone for
    /// `lastRoots` (a root N or more levels above the head is outside any undo window), time
    /// alone for `days`. O(1).
    func isExpiredByAge(_ entry: HistoryEntry) -> Bool {
        if entry.root == head.root { return false }
        switch policy {
        case .limitless: return false
        case .lastRoots(let count): return entry.depth + UInt64(max(count, 1)) <= head.depth
        case .days(let days): return entry.timeMilliseconds < nowMilliseconds - Int64(days) * 86_400_000
        }
    }

    /// The full test: for `lastRoots`, whether the root lies outside the undo window and the redo
    /// chain (side branches included). The first call under `lastRoots` walks the window and the
    /// chain, O((N + redo chain) log roots); later calls are O(1).
    mutating func isExpired(_ entry: HistoryEntry, trees: HistoryTrees, reader: some TreeReading) throws -> Bool {
        guard case .lastRoots(let count) = policy else { return isExpiredByAge(entry) }
        if entry.root == head.root { return false }
        if isExpiredByAge(entry) { return true }
        if kept == nil { kept = try Self.window(of: head, count: max(count, 1), trees: trees, reader: reader) }
        return !(kept?.contains(entry.root) ?? false)
    }

    /// The head, its `count - 1` nearest retained history ancestors, and its redo chain.
    static func window(
        of head: HistoryEntry, count: Int, trees: HistoryTrees, reader: some TreeReading
    ) throws -> Set<TransactionID> {
        var kept: Set<TransactionID> = [head.root]
        var cursor = head
        while kept.count < count, cursor.historyParent != .none,
            let parent = try trees.entry(cursor.historyParent, reader: reader)
        {
            kept.insert(parent.root)
            cursor = parent
        }
        cursor = head
        // A root already kept ends the walk, so a damaged index cannot make it loop.
        while cursor.redoTarget != .none, !kept.contains(cursor.redoTarget),
            let next = try trees.entry(cursor.redoTarget, reader: reader)
        {
            kept.insert(next.root)
            cursor = next
        }
        return kept
    }
}
