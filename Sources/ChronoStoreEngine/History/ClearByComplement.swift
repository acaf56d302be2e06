// clearHistory() when only the head stays: free every page the head and the engine do not use.

/// Dropping 100,000 roots one by one reads each root page for its lists and edits the lineage
/// lists root by root. When `clearHistory()` keeps nothing but the head (no snapshot, no reader
/// of another root, no other process reading), the outcome is known without that walk: every
/// page of the file that is neither reachable from the state (the head's trees and root page,
/// the engine's trees, the state page) nor already free is a page only dropped roots reached.
/// This marks the pages that stay in a bitmap and frees the rest: O(file pages / 64 + pages of
/// the head's and the engine's trees), whatever the number of roots.
///
/// Every page kind the state can reach must be marked here: a new engine structure that holds
/// pages (a new tree named by the state, pages named by its entries) has to be added to
/// `markReachable`, or this would free its pages. `verify()` after `clearHistory()` in the tests
/// catches a page freed while still in use.
extension WriteTransaction {
    /// Whether `clearHistory()` may take this path: nothing but the head (and this transaction)
    /// is pinned.
    func clearsByComplement(head: HistoryEntry) -> Bool {
        let pinned = allocator.pinnedRoots
        return pinned.snapshots.isEmpty && pinned.everythingFrom == nil
            && pinned.roots.subtracting([head.root, transaction]).isEmpty
    }

    /// Drops every root but `head`: frees what only they reached, and rebuilds the history,
    /// lineage and time indexes with the head alone (no lineage parent, empty lists: it is the
    /// top of its own lineage tree). Returns how many roots were dropped.
    /// `keyframes` are the head's packed versions as ``keyframesOfThePackedPagesOfTheHead(_:)``
    /// returned them.
    func clearByComplement(_ trees: inout HistoryTrees, head: HistoryEntry, keyframes: [PageReference: PackEntry]) throws -> Int {
        let pageCount = base.state.pageCount
        var kept = PageBitmap(pageCount: pageCount)
        // The head's packed versions have no slot of their own: their page numbers must not be
        // marked, or whatever page now lies in that slot would leak.
        let packed = keepOnlyPackedPagesOfTheHead(keyframes)
        try markReachable(&kept, trees: trees, head: head, packed: packed)
        for page in kept.unmarked() { allocator.released.append(page) }
        var dropped = 0
        try trees.entries.scan(.all, reverse: false, reader: self) { key, _ in
            if HistoryIndex.root(of: key) != head.root { dropped += 1 }
            return true
        }
        var top = head
        top.lineageParent = .none
        top.deadList = .empty
        top.newList = .empty
        top.deadListIsRootOwned = false
        top.newListIsRootOwned = false
        top.isLeftBehind = false
        for tree in [trees.entries, trees.lineage, trees.times] { try releaseAllPages(of: tree.root) }
        trees.entries.replace(root: try BTree.build(from: [(HistoryIndex.key(top.root), top.encoded())], owner: .system, editor: self))
        trees.lineage.replace(root: .none)
        trees.times.replace(root: try BTree.build(from: [(HistoryTrees.timeKey(top), .inline([]))], owner: .system, editor: self))
        rootsLeftBehind = []
        return dropped
    }

    /// Marks every page the state reaches, except the chunks of the head's merged lists (the
    /// head's lists become empty; chunks of lists its root page holds stay with it), and every
    /// page the free tree lists.
    private func markReachable(
        _ kept: inout PageBitmap, trees: HistoryTrees, head: HistoryEntry, packed: Set<PageReference>
    ) throws {
        kept.mark(base.stateReference.page)
        // The root page and the chunks of its own lists, which stay with it until it is dropped.
        let headRoot = try LoadedRoot(head.rootPage, reader: self)
        for page in try headRoot.metadataPages(reader: self) where !packed.contains(page) { kept.mark(page.page) }
        let engineTrees = [
            trees.entries.root, trees.lineage.root, trees.times.root, base.state.headTimeline, base.state.snapshots,
            base.state.freeTree,
        ]
        for tree in engineTrees { try TreePages.forEach(in: tree, reader: self) { page, _ in kept.mark(page.page) } }
        let catalog = BTree(root: headRoot.record.catalog, owner: .history)
        try TreePages.forEach(in: catalog.root, reader: self) { page, _ in if !packed.contains(page) { kept.mark(page.page) } }
        var collections: [PageReference] = []
        try catalog.scan(.all, reverse: false, reader: self) { _, value in
            collections.append(try CollectionEntry.decode(value, page: catalog.root.page).root)
            return true
        }
        for collection in collections {
            try TreePages.forEach(in: collection, reader: self) { page, _ in if !packed.contains(page) { kept.mark(page.page) } }
        }
        try allocator.baseFreeTree.scan(.all, reverse: false, reader: self) { key, value in
            for page in try FreeTree.decode(value, page: allocator.baseFreeTree.page(of: key)) { kept.mark(page) }
            return true
        }
    }

    /// The versions the head reads from pack entries (after an undo past the packing window),
    /// rebuilt as keyframes: a clear frees every pack page, so these are written again whole.
    /// Nil when one of them is too large for a pack page whole (a nearly full page of bytes that
    /// do not compress): its entry must stay a delta against pages of dropped roots, so clearing
    /// by complement cannot keep it, and the caller takes the general path. O(pages of the
    /// head's trees) index lookups.
    func keyframesOfThePackedPagesOfTheHead(_ head: HistoryEntry) throws -> [PageReference: PackEntry]? {
        guard !packWork.tree.root.isNone else { return [:] }
        let oldIndex = packWork.tree
        var references = [head.rootPage]
        let root = try LoadedRoot(head.rootPage, reader: self)
        try TreePages.forEach(in: root.record.catalog, reader: self) { page, _ in references.append(page) }
        var collections: [PageReference] = []
        try BTree(root: root.record.catalog, owner: .history).scan(.all, reverse: false, reader: self) { _, value in
            collections.append(try CollectionEntry.decode(value, page: root.record.catalog.page).root)
            return true
        }
        for collection in collections { try TreePages.forEach(in: collection, reader: self) { page, _ in references.append(page) } }
        var kept: [PageReference: PackEntry] = [:]
        let capacity = PackPage.capacity(pageSize: pageSize)
        for reference in references {
            guard let value = try oldIndex.lookup(packKey(reference), reader: self),
                case .packed = try PackIndex.decode(value, page: oldIndex.root.page, owner: reference.birth)
            else { continue }
            let keyframe = PackEntry.keyframe(of: try treeReader.read(reference, kind: nil, cached: false))
            guard packedByteCount(keyframe, reference) <= capacity else { return nil }
            kept[reference] = keyframe
        }
        return kept
    }

    /// Packed history after a clear: the pack index and pack pages are not marked, so they are
    /// freed, and the head's packed versions (`keyframes`) go into a new pack index whole, which
    /// `finishPacking` writes. Returns those versions.
    private func keepOnlyPackedPagesOfTheHead(_ kept: [PageReference: PackEntry]) -> Set<PageReference> {
        guard !packWork.tree.root.isNone else { return [] }
        // The old index's pages and pack pages are left unmarked: the complement frees them.
        packWork.tree = BTree(root: .none, owner: .system)
        packWork.counters = PackCounters(
            cursor: packWork.counters.cursor, depth: packWork.counters.depth, keyOrder: packWork.newIndexKeyOrder,
            namesEntries: packWork.newIndexNamesEntries)
        packWork.runs = [:]
        packWork.lost = [:]
        packWork.pending = kept
        packWork.packedHere = []
        return Set(kept.keys)
    }

    private func releaseAllPages(of root: PageReference) throws {
        var pages: [PageReference] = []
        try TreePages.forEach(in: root, reader: self) { page, _ in pages.append(page) }
        for page in pages { releasePage(page, owner: .system) }
    }
}

/// One bit per page of the file below the allocation mark.
struct PageBitmap {
    private var words: [UInt64]
    let pageCount: UInt64

    init(pageCount: UInt64) {
        self.pageCount = pageCount
        words = [UInt64](repeating: 0, count: Int((pageCount + 63) / 64))
    }

    /// Marks `page`; pages outside the file (named by damaged bytes) are ignored here and
    /// reported by the reads that follow them.
    mutating func mark(_ page: PageID) {
        guard page.rawValue < pageCount else { return }
        words[Int(page.rawValue / 64)] |= 1 << (page.rawValue % 64)
    }

    /// Every page from 1 (page 0 is the file header) that is not marked, in order.
    func unmarked() -> [PageID] {
        var pages: [PageID] = []
        for (index, word) in words.enumerated() where word != UInt64.max {
            for bit in 0..<64 where word & (1 << UInt64(bit)) == 0 {
                let page = UInt64(index) * 64 + UInt64(bit)
                if page >= 1 && page < pageCount { pages.append(PageID(page)) }
            }
        }
        return pages
    }
}
