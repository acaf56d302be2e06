// Leaf balancing: a leaf that overflows shares its entries with a neighbour under the same parent before a split adds a page.

extension BTree {
    /// The fullest a two-leaf share may leave the pair, as a fraction of their entry space
    /// (numerator over 16): each keeps at least 1/32 of a page free (128 bytes of 4 KiB). A share
    /// that would leave them fuller buys little room before the next overflow, so their entries
    /// are spread over three leaves instead (B*-tree style), each about two thirds full. 15 over
    /// 16 measured 80-81 % leaf fill for random inserts at the cost of a bulk load about 15 %
    /// slower; 16 (share whenever it fits) 84-85 %, but a bulk load 25 % and scattered batches
    /// 35 % slower, from many shares that each gain a few bytes.
    static var sharedFillLimitSixteenths: Int { 15 }

    /// Settles `leaf`, child `childIndex` of `branch`, over-full after entry `index` was put in
    /// it, by spreading its entries and those of one neighbour under the same parent (the one
    /// with more room) evenly by bytes: over the two leaves when they fit with some room to
    /// spare (``sharedFillLimitSixteenths``), else over three (the pair and one new leaf between
    /// them, each about two thirds full, where a split leaves the neighbour as it was and two
    /// halves). Either way random inserts leave leaves fuller than splits alone (issue 14).
    ///
    /// A put at the leaf's right edge is left to the split, which keeps the left page full, so
    /// ascending appends still fill whole leaves. Separators stay the first key of the leaf on
    /// their right, which keeps the order rule (at most the first key on the right, above every
    /// key on the left); only those between the leaves involved change.
    ///
    /// A committed neighbour is copied onto a new page (the old one released as any replaced page
    /// is), so sharing with it costs the same two page writes as a split, and the three-leaf
    /// spread one more; a neighbour this transaction already wrote costs no write.
    /// - Returns: whether the leaf was settled; when false nothing changed and the caller splits it.
    func balanceLeaf(
        _ leaf: LeafNode, insertedAt index: Int, in branch: some BranchEditing, childIndex: Int, editor: some TreeEditing
    ) throws -> Bool {
        guard index < leaf.keys.count - 1 else { return false }
        guard let neighbour = try roomiestNeighbour(of: childIndex, in: branch, editor: editor) else { return false }
        // Sizes read from local copies of the arrays, not through the class on every call.
        let (leafKeys, leafValues) = (leaf.keys, leaf.values)
        guard let found = Self.spreadCuts(
            leaf: (leaf.keys.count, leaf.byteCount, { NodeLayout.leafEntryByteCount(key: leafKeys[$0], value: leafValues[$0]) }),
            neighbour: neighbour, neighbourFirst: neighbour.index < childIndex, pageSize: editor.pageSize)
        else { return false }
        if case .leafPage(let view) = neighbour.read,
            try share(leaf, childIndex: childIndex, withPage: view, at: neighbour.index, cuts: found, in: branch, editor: editor)
        {
            return true
        }
        try share(leaf, childIndex: childIndex, withNode: neighbour.read, at: neighbour.index, cuts: found, in: branch, editor: editor)
        return true
    }

    /// ``balanceLeaf(_:insertedAt:in:childIndex:editor:)`` with a neighbour as this transaction's
    /// node (`read`; or a page that ``share(_:childIndex:withPage:at:cuts:in:editor:)`` declined,
    /// decoded here): entries move between the nodes. `cuts` as for that method.
    private func share(
        _ leaf: LeafNode, childIndex: Int, withNode read: NodeRead, at neighbourIndex: Int, cuts found: [Int],
        in branch: some BranchEditing, editor: some TreeEditing
    ) throws {
        let (neighbourReference, content) = try editableNode(branch.child(at: neighbourIndex), read: read, editor: editor)
        guard case .leaf(let neighbourLeaf) = content else {
            throw StoreError.malformedPage(page: neighbourReference.page, reason: "siblings of different kinds")
        }
        branch.setChild(neighbourReference, at: neighbourIndex)
        let (left, right) = neighbourIndex < childIndex ? (neighbourLeaf, leaf) : (leaf, neighbourLeaf)
        let leftIndex = min(childIndex, neighbourIndex)
        Self.moveBoundary(between: left, and: right, to: found[found.count - 1])
        branch.replaceSeparator(at: leftIndex, with: right.keys[0])
        if found.count == 2 {
            let middle = LeafNode()
            left.moveTail(from: found[0], toFrontOf: middle)
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .leaf(middle))
            branch.insert(
                separator: middle.keys[0], rightChild: PageReference(page: page, birth: editor.transaction), at: leftIndex)
        }
    }

    /// ``balanceLeaf(_:insertedAt:in:childIndex:editor:)`` with a neighbour in page form (committed,
    /// or this transaction's copy held as bytes), without decoding it: the neighbour's new page,
    /// and the new middle leaf of a three-way spread, are laid out from runs of its bytes and of
    /// the over-full leaf's entries, and held as bytes (later puts edit them as bytes too).
    /// `cuts` are where the leaves of the spread start, counted over both leaves' entries in key
    /// order.
    /// - Returns: false, changing nothing, for the rare spread where the neighbour would give
    ///   entries to the leaf rather than take them (the caller decodes the neighbour).
    private func share(
        _ leaf: LeafNode, childIndex: Int, withPage view: LeafView, at neighbourIndex: Int, cuts: [Int],
        in branch: some BranchEditing, editor: some TreeEditing
    ) throws -> Bool {
        let (leafCount, viewCount) = (leaf.keys.count, view.count)
        let neighbourFirst = neighbourIndex < childIndex
        let kept: Range<Int>
        var neighbourRuns: [LeafRun]
        var middleRuns: [LeafRun] = []
        switch (neighbourFirst, cuts.count) {
        case (true, 1):  // [neighbour, leaf] -> [neighbour + head of leaf, leaf]
            guard cuts[0] >= viewCount else { return false }
            kept = (cuts[0] - viewCount)..<leafCount
            neighbourRuns = [.page(view, 0..<viewCount), .node(leaf, 0..<kept.lowerBound)]
        case (true, _):  // [neighbour, leaf] -> [neighbour, middle, leaf]
            guard cuts[1] >= viewCount else { return false }
            kept = (cuts[1] - viewCount)..<leafCount
            let neighbourEnd = min(cuts[0], viewCount)
            let middleStart = max(cuts[0] - viewCount, 0)
            neighbourRuns = [.page(view, 0..<neighbourEnd), .node(leaf, 0..<middleStart)]
            middleRuns = [.page(view, neighbourEnd..<viewCount), .node(leaf, middleStart..<kept.lowerBound)]
        case (false, 1):  // [leaf, neighbour] -> [leaf, tail of leaf + neighbour]
            guard cuts[0] <= leafCount else { return false }
            kept = 0..<cuts[0]
            neighbourRuns = [.node(leaf, kept.upperBound..<leafCount), .page(view, 0..<viewCount)]
        case (false, _):  // [leaf, neighbour] -> [leaf, middle, neighbour]
            guard cuts[0] <= leafCount else { return false }
            kept = 0..<cuts[0]
            let (middleEnd, neighbourStart) = (min(cuts[1], leafCount), max(cuts[1] - leafCount, 0))
            middleRuns = [.node(leaf, kept.upperBound..<middleEnd), .page(view, 0..<neighbourStart)]
            neighbourRuns = [.node(leaf, middleEnd..<leafCount), .page(view, neighbourStart..<viewCount)]
        }
        // Lay out the new pages before the leaf gives up its entries.
        let neighbourPage = try pageForNewBytes(replacing: branch.child(at: neighbourIndex), editor: editor)
        let neighbourBuffer = layOutLeaf(neighbourRuns, onto: neighbourPage, editor: editor)
        var middle: (reference: PageReference, firstKey: [UInt8])?
        if !middleRuns.isEmpty {
            let page = PageReference(page: try editor.allocatePage(owner: owner), birth: editor.transaction)
            middle = (page, Array(LeafView(page: layOutLeaf(middleRuns, onto: page, editor: editor)).key(at: 0)))
        }
        leaf.keepOnly(kept)
        branch.setChild(neighbourPage, at: neighbourIndex)
        let leftIndex = min(childIndex, neighbourIndex)
        let rightFirstKey = neighbourFirst ? leaf.keys[0] : Array(LeafView(page: neighbourBuffer).key(at: 0))
        branch.replaceSeparator(at: leftIndex, with: rightFirstKey)
        if let middle { branch.insert(separator: middle.firstKey, rightChild: middle.reference, at: leftIndex) }
        return true
    }

    /// Where the new bytes of the leaf at `reference` go: its own page when this transaction holds
    /// it (as bytes, or decoded: a spread of an ``OverfullLeaf`` lays a decoded neighbour out as
    /// bytes on its page), else a new page (the old one released).
    func pageForNewBytes(replacing reference: PageReference, editor: some TreeEditing) throws -> PageReference {
        if reference.birth == editor.transaction {
            switch editor.dirtyPage(reference.page) {
            case .raw(_, .leaf, _)?, .leaf?: return reference
            default: break
            }
        }
        let page = try editor.allocatePage(owner: owner)
        editor.releasePage(reference, owner: owner)
        return PageReference(page: page, birth: editor.transaction)
    }

    /// The neighbour of child `childIndex` with the fewest bytes, when the children are leaves.
    func roomiestNeighbour(
        of childIndex: Int, in branch: some BranchEditing, editor: some TreeEditing
    ) throws -> (index: Int, read: NodeRead, count: Int, byteCount: Int, size: (Int) -> Int)? {
        var best: (index: Int, read: NodeRead, count: Int, byteCount: Int, size: (Int) -> Int)?
        for candidate in [childIndex - 1, childIndex + 1] where (0..<branch.childCount).contains(candidate) {
            let read = try editor.node(branch.child(at: candidate))
            switch read {
            case .leaf(let node):
                if let best, best.byteCount <= node.byteCount { continue }
                let (keys, values) = (node.keys, node.values)
                best = (candidate, read, keys.count, node.byteCount, { NodeLayout.leafEntryByteCount(key: keys[$0], value: values[$0]) })
            case .leafPage(let view):
                let byteCount = NodeLayout.leafLayout(view).byteCount
                if let best, best.byteCount <= byteCount { continue }
                best = (candidate, read, view.count, byteCount, { view.entryByteCount($0) })
            case .branch, .branchPage:
                return nil
            }
        }
        return best
    }

    /// Moves entries between neighbours `left` and `right` so that `left` holds the first
    /// `boundary` entries of the two.
    private static func moveBoundary(between left: LeafNode, and right: LeafNode, to boundary: Int) {
        let leftCount = left.keys.count
        if boundary < leftCount {
            left.moveTail(from: boundary, toFrontOf: right)
        } else if boundary > leftCount {
            right.moveHead(boundary - leftCount, toEndOf: left)
        }
    }

    /// Where the spread of an over-full leaf (its entry count, bytes and entry sizes) and its
    /// `neighbour` cuts their entries, counted over both in key order: over two leaves when they
    /// end at most ``sharedFillLimitSixteenths`` full, else over three; nil when neither fits.
    static func spreadCuts(
        leaf: (count: Int, byteCount: Int, size: (Int) -> Int),
        neighbour: (index: Int, read: NodeRead, count: Int, byteCount: Int, size: (Int) -> Int),
        neighbourFirst: Bool, pageSize: Int
    ) -> [Int]? {
        let firstCount = neighbourFirst ? neighbour.count : leaf.count
        let (firstSize, secondSize) = neighbourFirst ? (neighbour.size, leaf.size) : (leaf.size, neighbour.size)
        let count = leaf.count + neighbour.count
        let total = leaf.byteCount + neighbour.byteCount - 2 * NodeLayout.leafBaseByteCount
        let capacity = pageSize - NodeLayout.leafBaseByteCount
        func cuts(_ pageCount: Int) -> [Int]? {
            evenCuts(count: count, total: total, pageCount: pageCount, capacity: capacity) { entry in
                entry < firstCount ? firstSize(entry) : secondSize(entry - firstCount)
            }
        }
        if 16 * total <= 2 * capacity * sharedFillLimitSixteenths, let two = cuts(2) { return two }
        return cuts(3)
    }

    /// Where to cut `count` entries (of `size(entry)` bytes each, `total` in all) into `pageCount`
    /// runs of about equal bytes: the entry that starts each run after the first. Every run holds
    /// an entry; nil when a run would exceed `capacity`. O(count).
    static func evenCuts(
        count: Int, total: Int, pageCount: Int, capacity: Int, size: (Int) -> Int
    ) -> [Int]? {
        guard count >= pageCount else { return nil }
        var cuts: [Int] = []
        var entry = 0
        var running = 0
        for part in 1..<pageCount {
            let target = total * part / pageCount
            let runStart = entry
            let runStartBytes = running
            // Take the next entry while its middle lies before the target, or the run is empty.
            while entry < count - (pageCount - part) {
                let next = size(entry)
                guard entry == runStart || 2 * running + next <= 2 * target else { break }
                running += next
                entry += 1
            }
            guard running - runStartBytes <= capacity else { return nil }
            cuts.append(entry)
        }
        return total - running <= capacity ? cuts : nil
    }
}
