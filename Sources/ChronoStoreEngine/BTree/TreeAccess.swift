// What a B+tree needs from a transaction: verified pages to read, and pages to allocate and release.

/// A node as a tree operation sees it: a sealed page read through the cache, or a node the
/// current write transaction is still editing.
enum NodeRead {
    case leafPage(LeafView)
    case branchPage(BranchView)
    case leaf(LeafNode)
    case branch(BranchNode)
}

/// Read access to one consistent version of the store's pages.
protocol TreeReading: AnyObject {
    var pageSize: Int { get }
    /// The allocation mark of the version being read: no page reached from it lies at or beyond.
    /// Counts read from disk (list lengths, value lengths) are bounded by it.
    var pageCount: UInt64 { get }
    /// The leaf or branch at `reference`, verified (checksum, id, kind, birth).
    func node(_ reference: PageReference) throws -> NodeRead
    /// An overflow or list page at `reference`, verified.
    func rawPage(_ reference: PageReference, kind: PageKind) throws -> PageBuffer
}

/// Who owns a tree's pages, which decides where a page goes when the tree stops using it.
package enum PageOwner: Sendable {
    /// Pages of the user-visible trees (catalog, collections, overflow). A replaced page is still
    /// part of older roots, so it goes on the committing root's invalidated list (its deadlist).
    case history
    /// Pages of the engine's own trees (history index, free tree). Only the previous state
    /// reaches a replaced one, so it is released at once, reusable once this commit is durable.
    case system
}

/// Write access: everything a copy-on-write edit needs.
protocol TreeEditing: TreeReading {
    /// The transaction being built; every page it writes is born with this id.
    var transaction: TransactionID { get }
    /// The node or raw page this transaction wrote at `page`, if any.
    func dirtyPage(_ page: PageID) -> DirtyPage?
    /// Records new content for a page this transaction allocated.
    func setDirty(_ page: PageID, _ content: DirtyPage)
    /// A page number free for this transaction to write.
    func allocatePage(owner: PageOwner) throws -> PageID
    /// A page for the copy of `reference` (copy on write), which is released: a page written by
    /// the previous commit is likely replaced again by the next, and the allocator places such
    /// pages together (see `AllocatorState`).
    func allocateCopy(of reference: PageReference, owner: PageOwner) throws -> PageID
    /// Says a tree no longer uses `reference`; a page written by this transaction is reusable at once.
    func releasePage(_ reference: PageReference, owner: PageOwner)
    /// Separator layouts a branch in page form may take in this transaction before it is decoded
    /// (``BranchEdit``); 0 decodes every branch whose child splits or spreads, as tests compare.
    var branchByteLayoutLimit: UInt8 { get }
}
