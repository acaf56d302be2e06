// A read transaction: one pinned root, read for as long as the transaction lives.

/// Reads one root of the store. Any number may run at once, alongside one writer.
///
/// A read transaction sees exactly the root it started on for its whole life, and pins it:
/// no commit can free the pages it reads until ``close()``. Not thread-safe: use it from one
/// task at a time.
package final class ReadTransaction: CollectionReadingBase {
    package let snapshot: StoreSnapshot
    let treeReader: SnapshotReader
    let catalogTree: BTree
    private let store: Store
    private var isClosed = false

    init(store: Store, snapshot: StoreSnapshot) {
        self.store = store
        self.snapshot = snapshot
        // An older root's pages are likely packed: look in the pack index before the slot. So
        // are the head's after an undo past the packing cursor. A packed version's slot is free
        // and a commit may rewrite it at any time, so it must not be read from the slot. A head
        // that may reach packed versions (after a revert, say) looks in the index first for
        // versions born at or before the cursor: only those can be packed.
        let state = snapshot.state
        let readsOldRoot = snapshot.head.transaction != state.head.birth || snapshot.head.transaction < state.packs.cursor
        self.treeReader = SnapshotReader(
            pageFile: store.pageFile, pageCount: state.pageCount, packs: state.packs, prefersPacks: readsOldRoot,
            packsFirstBelow: !state.headReadsOldVersionsFromPacks ? 0 : state.packs.cursor.rawValue == .max ? .max : state.packs.cursor.rawValue + 1)
        self.catalogTree = BTree(root: snapshot.head.catalog, owner: .history)
    }

    deinit { close() }

    /// The root this transaction reads.
    package var root: RootRecord { snapshot.head }

    var collectionReader: SnapshotReader { treeReader }

    /// A reader for pages of other retained roots than the one read (history listings, backups
    /// with history): it looks in the pack index before a page's slot. A packed version's slot is
    /// free and a commit may be rewriting it, so reading it there could see bytes change under
    /// the read (regression: `PackedSlotReuseTests`).
    private(set) lazy var historicReader: SnapshotReader =
        treeReader.packs?.prefersPacks ?? true
        ? treeReader
        : SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount, packs: snapshot.state.packs, prefersPacks: true)

    func collectionEntry(_ name: [UInt8]) throws -> CollectionEntry? { try catalogEntry(name) }

    /// The catalog entry looked up last, by collection name: a root never changes under a read
    /// transaction, so a run of reads in one collection descends the catalog tree once (the
    /// descent was 12 % of an in-cache point read; issue 14).
    private var rememberedEntry: (name: String, entry: CollectionEntry?)?

    func collectionEntry(named collection: String) throws -> CollectionEntry? {
        if let rememberedEntry, rememberedEntry.name == collection { return rememberedEntry.entry }
        let entry = try collectionEntry(CollectionEntry.validateName(collection))
        rememberedEntry = (collection, entry)
        return entry
    }

    /// Ends the transaction and unpins its root. Safe to call more than once.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        store.unpin(snapshot.head.transaction)
    }
}
