// What pruning remembers between commits: which roots snapshots pin, and roots left behind by pins.

/// The writer's memory between commits, so that a commit need not read the whole snapshot tree
/// nor search the history for roots whose pin went away.
///
/// - **Snapshot pins.** A commit must never prune a snapshot's root. Reading the snapshot tree
///   in every commit costs O(snapshots); instead the counts are remembered for the tree's root
///   page. A commit that edits no snapshot reuses them in O(1); one that creates or deletes
///   snapshots updates them in O(log snapshots) per edit; a tree this process has not seen (the
///   first commit after opening, or after another process changed the snapshots) is read once.
/// - **Roots left behind.** A root of a dropped branch that a reader pinned stays, marked in its
///   history entry. Readers let go without a commit, so the next commits look at these roots
///   directly. A process that opens the store does not know them; they then go when automatic
///   pruning reaches them in commit order, or at `prune()`.
///
/// Both are remembered when the commit that computed them is published, or for a durable commit
/// when it is written and registered for its group's sync (forgotten if that group fails).
///
/// `@unchecked Sendable`: `lock` guards every stored property. Only the writer (one at a time)
/// uses them, so the lock is never contended; it is there for the type checker.
final class PruningMemory: @unchecked Sendable {
    private let lock = Lock()
    private var snapshotTree = PageReference.none
    private var snapshotCounts: [TransactionID: Int] = [:]
    private var knowsSnapshots = false
    private var leftBehind: Set<TransactionID> = []

    /// The pin counts for the snapshot tree rooted at `root`, read in full when not remembered.
    func snapshotCounts(for root: PageReference, reader: some TreeReading) throws -> [TransactionID: Int] {
        if let known = lock.withLock({ knowsSnapshots && snapshotTree == root ? snapshotCounts : nil }) { return known }
        var fresh: [TransactionID: Int] = [:]
        for info in try SnapshotTree.all(root, reader: reader) { fresh[info.root, default: 0] += 1 }
        return fresh
    }

    /// Roots a published commit left behind and has not dropped yet.
    var rootsLeftBehind: Set<TransactionID> { lock.withLock { leftBehind } }

    /// Forgets everything: a commit that was remembered before it was published has failed.
    func forget() {
        lock.withLock {
            knowsSnapshots = false
            leftBehind = []
        }
    }

    /// Records what a published commit computed.
    func remember(snapshotCounts counts: [TransactionID: Int], for root: PageReference, leftBehind roots: Set<TransactionID>) {
        lock.withLock {
            snapshotCounts = counts
            snapshotTree = root
            knowsSnapshots = true
            leftBehind = roots
        }
    }
}
