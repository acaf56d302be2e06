// Pairs each page a commit replaced with the page that took its place, by walking the parent's
// and the new root's trees side by side: the base a packed (reverse) delta would be made against.
@testable import ChronoStoreEngine

/// One page a commit's deadlist names, with the page of the new root that replaced it.
struct ReplacedPage {
    enum Tree { case catalog, collection, overflow }
    let old: PageBuffer
    /// The page at the same height of the same tree in the new root covering the old page's
    /// lowest key; nil when the new root has no such tree (or for overflow pages).
    let base: PageBuffer?
    let tree: Tree
}

/// Finds the replacement of every dead page of one commit.
///
/// A dead leaf or branch is matched to the page of the new root's tree (the catalog, or the
/// collection of the same name) at the same height above the leaves whose key range holds the
/// old page's lower bound. That is the page a commit's copy-on-write path wrote in its place,
/// or, after a split or merge, the neighbour that took over its first keys. Overflow pages get
/// no base (a large value is rewritten whole). The rule reads O(height) pages per dead page of
/// both roots, which both are retained and unpacked when a packer would run it.
struct ReplacedPagePairing {
    let reader: SnapshotReader
    let dead: Set<PageReference>

    func pairs(parentCatalog: PageReference, newCatalog: PageReference) throws -> [ReplacedPage] {
        var result: [ReplacedPage] = []
        try pairTree(old: parentCatalog, new: newCatalog, tree: .catalog, into: &result)
        let oldCatalog = BTree(root: parentCatalog, owner: .history)
        let newTree = BTree(root: newCatalog, owner: .history)
        var collections: [(PageReference, PageReference)] = []
        try oldCatalog.scan(.all, reverse: false, reader: reader) { key, value in
            let oldEntry = try CollectionEntry.decode(value, page: parentCatalog.page)
            let newValue = try newTree.lookup(key, reader: reader)
            let newRoot = try newValue.map { try CollectionEntry.decode($0, page: newCatalog.page).root } ?? .none
            collections.append((oldEntry.root, newRoot))
            return true
        }
        for (old, new) in collections { try pairTree(old: old, new: new, tree: .collection, into: &result) }
        let paired = Set(result.map { $0.old.reference })
        for reference in dead.subtracting(paired).sorted(by: { $0.page < $1.page }) {
            let page = try reader.pageFile.read(reference, kind: nil, pageCount: reader.pageCount)
            result.append(ReplacedPage(old: page, base: nil, tree: .overflow))
        }
        return result
    }

    private func pairTree(old: PageReference, new: PageReference, tree: ReplacedPage.Tree, into result: inout [ReplacedPage]) throws {
        guard !old.isNone else { return }
        let oldHeight = try height(old)
        let newHeight = new.isNone ? 0 : try height(new)
        try visit(old, lowerBound: nil, height: oldHeight, newRoot: new, newHeight: newHeight, tree: tree, into: &result)
    }

    /// Visits the dead pages under `reference`; a live page's whole subtree is shared, so the
    /// walk stops there.
    private func visit(
        _ reference: PageReference, lowerBound: [UInt8]?, height: Int, newRoot: PageReference, newHeight: Int,
        tree: ReplacedPage.Tree, into result: inout [ReplacedPage]
    ) throws {
        guard dead.contains(reference) else { return }
        let page = try read(reference)
        let base = newRoot.isNone ? nil : try counterpart(newRoot, newHeight, lowerBound: lowerBound, height: height)
        result.append(ReplacedPage(old: page, base: base, tree: tree))
        guard page.kindByte == PageKind.branch.rawValue else { return }
        let view = BranchView(page: page)
        for index in 0...view.keyCount {
            let bound = index == 0 ? lowerBound : Array(view.key(at: index - 1))
            try visit(
                view.child(at: index), lowerBound: bound, height: height - 1, newRoot: newRoot, newHeight: newHeight,
                tree: tree, into: &result)
        }
    }

    /// The page of the new tree at `height` (or its root, if the new tree is lower) whose range
    /// holds `lowerBound` (its leftmost page when there is no bound).
    private func counterpart(_ root: PageReference, _ rootHeight: Int, lowerBound: [UInt8]?, height: Int) throws -> PageBuffer {
        var reference = root
        var current = rootHeight
        var page = try read(reference)
        while current > height, page.kindByte == PageKind.branch.rawValue {
            let view = BranchView(page: page)
            let index = lowerBound.map { key in key.withUnsafeBytes { view.childIndex(for: $0) } } ?? 0
            reference = view.child(at: index)
            page = try read(reference)
            current -= 1
        }
        return page
    }

    /// Levels above the leaves: 0 for a leaf.
    private func height(_ root: PageReference) throws -> Int {
        var page = try read(root)
        var levels = 0
        while page.kindByte == PageKind.branch.rawValue {
            page = try read(BranchView(page: page).child(at: 0))
            levels += 1
        }
        return levels
    }

    private func read(_ reference: PageReference) throws -> PageBuffer {
        try reader.pageFile.read(reference, kind: nil, pageCount: reader.pageCount)
    }
}
