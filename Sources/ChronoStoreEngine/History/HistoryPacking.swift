// How a store packs old page versions into deltas (format version 2 and later): window, keyframes, batches.

/// Settings for packed history (see Docs/RootChain.md, "Packed history").
///
/// Pages that no root of the **window** (the head and the `window − 1` lineage ancestors before
/// it) reaches any more are rewritten as reverse deltas against the page that replaced them, and
/// their slots are given back. Packing runs inside commits, a batch of roots at a time.
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

    package init(
        window: Int = 4, batchRoots: Int = 4, leafChainLimit: Int = 48, branchChainLimit: Int = 128,
        rootChainLimit: Int = 16, pageBudget: Int = 512, isEnabled: Bool = true
    ) {
        self.window = max(window, 1)
        self.batchRoots = max(batchRoots, 1)
        self.leafChainLimit = min(max(leafChainLimit, 1), WriteTransaction.hardChainLimit)
        self.branchChainLimit = min(max(branchChainLimit, 1), WriteTransaction.hardChainLimit)
        self.rootChainLimit = min(max(rootChainLimit, 1), WriteTransaction.hardChainLimit)
        self.pageBudget = max(pageBudget, 1)
        self.isEnabled = isEnabled
    }

    package static let standard = HistoryPacking()
    package static let disabled = HistoryPacking(isEnabled: false)
}
