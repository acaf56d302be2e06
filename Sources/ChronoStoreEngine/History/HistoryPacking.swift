// How a store packs old page versions into deltas (format version 2 and later): window, keyframes, batches.

/// Settings for packed history (see Docs/RootChain.md, "Packed history").
///
/// Pages that no root of the **window** (the head and the `window − 1` lineage ancestors before
/// it) reaches any more are rewritten as reverse deltas against the page that replaced them, and
/// their slots are given back. Packing runs a batch of roots at a time: inside commits, or (durable
/// stores, by default) in a commit of its own that a background thread builds while the commit
/// that made the batch due waits for its sync (see ``inBackground``).
package struct HistoryPacking: Sendable, Equatable {
    /// Roots at the head's end of the lineage kept whole (undo and redo there read whole pages).
    package var window: Int
    /// Packing waits until this many roots beyond the window can be packed.
    package var batchRoots: Int
    /// A leaf is stored whole (a keyframe) once a chain of this many deltas would end at it.
    package var leafChainLimit: Int
    /// The same for branch pages (whose deltas are a few bytes).
    package var branchChainLimit: Int
    /// The same for root pages, each a delta against its lineage child's root page (a reader of
    /// an old root rebuilds its root page once, when it opens).
    package var rootChainLimit: Int
    /// Pages one commit packs at most; the rest wait for later commits.
    package var pageBudget: Int
    /// Whether commits pack at all (reading packed pages never depends on it).
    package var isEnabled: Bool
    /// Whether a durable store packs in *packing commits* of their own rather than inside the
    /// commits that make packing due. When a durable commit leaves a batch due, its writer hands
    /// the writer gate to a background thread, which builds a commit that only packs on top of
    /// it while the commit's own sync runs, and registers it for the next group's sync (the next
    /// commit's, or its own after ``joinDelayNanoseconds``). Deferred-mode stores and stores
    /// with secure delete always pack inside commits.
    package var inBackground: Bool

    /// The batch of a packing commit, when it is smaller than ``batchRoots`` and history is not
    /// limitless: a packing commit runs while the commit before it syncs, so it packs fewer
    /// roots at a time to come closer to fitting in that sync (two ten-update roots took about
    /// twice a sync on the benchmark's disk, four about four times; see Docs/Performance.md,
    /// "Packing commits"). Limitless history keeps ``batchRoots``, whose walks fill pack pages
    /// better.
    package var packingCommitBatchRoots = 2

    /// How long a packing commit waits for a later commit to share its sync before it syncs
    /// alone (it holds the data file's writer lock until then).
    package static let joinDelayNanoseconds: UInt64 = 10_000_000

    package init(
        window: Int = 4, batchRoots: Int = 4, leafChainLimit: Int = 48, branchChainLimit: Int = 128,
        rootChainLimit: Int = 16, pageBudget: Int = 512, isEnabled: Bool = true, inBackground: Bool = true
    ) {
        self.window = max(window, 1)
        self.batchRoots = max(batchRoots, 1)
        self.leafChainLimit = min(max(leafChainLimit, 1), WriteTransaction.hardChainLimit)
        self.branchChainLimit = min(max(branchChainLimit, 1), WriteTransaction.hardChainLimit)
        self.rootChainLimit = min(max(rootChainLimit, 1), WriteTransaction.hardChainLimit)
        self.pageBudget = max(pageBudget, 1)
        self.isEnabled = isEnabled
        self.inBackground = inBackground
    }

    package static let standard = HistoryPacking()
    package static let disabled = HistoryPacking(isEnabled: false)
}
