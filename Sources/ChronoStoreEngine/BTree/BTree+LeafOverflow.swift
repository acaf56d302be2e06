// A leaf in page form that one put overfills: split, or shared with a neighbour, as bytes.

/// A leaf held as bytes (a committed page, or this transaction's byte copy) with one put that
/// does not fit: its entries in key order with the put's entry at `index`, inserted there or in
/// place of the entry there. Nothing is decoded: the pages that settle it are laid out from runs
/// of the old page's entry bytes and the new entry (``LeafRun``). A class: every level of an
/// insert returns a result that may carry one, and an inline struct made every return larger (a bulk
/// load took 3.7 % more instructions).
final class OverfullLeaf {
    let view: LeafView
    /// Where the put's entry goes among the result's entries.
    let index: Int
    /// Whether the put replaces the entry at `index` (same key) rather than inserting one.
    let replacing: Bool
    let key: [UInt8]
    let value: LeafValue
    /// The leaf's page: a committed one (copied when settled, the old page released) or this
    /// transaction's own byte copy (laid out again in place).
    let reference: PageReference
    /// The byte edits the leaf took in this transaction (see `BTree.byteEditLimit`):
    /// the pages that settle it carry the count on, so a leaf edited many times is still decoded.
    let edits: UInt8
    /// The size the leaf would have with the put, as ``LeafNode/byteCount`` counts it.
    let byteCount: Int

    init(view: LeafView, index: Int, replacing: Bool, key: [UInt8], value: LeafValue, reference: PageReference, edits: UInt8) {
        self.view = view
        self.index = index
        self.replacing = replacing
        self.key = key
        self.value = value
        self.reference = reference
        self.edits = edits
        var total = NodeLayout.leafLayout(view).byteCount + NodeLayout.leafEntryByteCount(key: key, value: value)
        if replacing { total -= view.entryByteCount(index) }
        byteCount = total
    }

    var count: Int { replacing ? view.count : view.count + 1 }

    /// The value the put replaces, if any.
    var previous: LeafValue? { replacing ? view.value(at: index) : nil }

    /// The page entry that is entry `entry` of the result (`entry` != `index`).
    private func pageEntry(_ entry: Int) -> Int {
        entry < index || replacing ? entry : entry - 1
    }

    /// Entry `entry`'s size in a page: offset slot, header, key and value.
    func size(_ entry: Int) -> Int {
        entry == index ? NodeLayout.leafEntryByteCount(key: key, value: value) : view.entryByteCount(pageEntry(entry))
    }

    func key(at entry: Int) -> [UInt8] {
        entry == index ? key : Array(view.key(at: pageEntry(entry)))
    }

    /// Entries `range` of the result as runs to lay out.
    func runs(_ range: Range<Int>) -> [LeafRun] {
        var runs: [LeafRun] = []
        if range.lowerBound < index {
            runs.append(.page(view, range.lowerBound..<min(range.upperBound, index)))
        }
        if range.contains(index) { runs.append(.entry(key, value)) }
        let after = max(range.lowerBound, index + 1)
        if after < range.upperBound {
            runs.append(.page(view, pageEntry(after)..<(pageEntry(range.upperBound - 1) + 1)))
        }
        return runs
    }
}

extension BTree {
    /// The put of `key` into the leaf page `view` as an ``OverfullLeaf``, for a put that does
    /// not fit (the caller has tried the byte edit that would).
    func overfullLeaf(
        _ view: LeafView, key: [UInt8], keyBytes: UnsafeRawBufferPointer, value: LeafValue, at reference: PageReference,
        edits: UInt8
    ) -> OverfullLeaf {
        let (index, found) = view.search(keyBytes)
        return OverfullLeaf(view: view, index: index, replacing: found, key: key, value: value, reference: reference, edits: edits)
    }

    /// The page the leaf's own part goes on: its page when this transaction holds it as bytes,
    /// else a copy (the committed page released, as any copy on write does).
    private func ownPage(of leaf: OverfullLeaf, editor: some TreeEditing) throws -> PageReference {
        if leaf.reference.birth == editor.transaction { return leaf.reference }
        return PageReference(page: try editor.allocateCopy(of: leaf.reference, owner: owner), birth: editor.transaction)
    }

    /// Lays out `runs` as this transaction's leaf bytes for `reference`, open to byte edits with
    /// `edits` already counted (see `markLaidOut`).
    @discardableResult
    func layOutLeaf(_ runs: [LeafRun], onto reference: PageReference, edits: UInt8 = 0, editor: some TreeEditing) -> PageBuffer {
        let buffer = PageBuffer(uninitializedPageSize: editor.pageSize)
        let count = NodeLayout.encode(runs, into: buffer)
        Self.markLaidOut(buffer, edits: edits)
        editor.setDirty(reference.page, .raw(buffer, kind: .leaf, count: count))
        return buffer
    }

    /// Splits `leaf` in two pages as ``splitLeaf(_:at:insertedAt:editor:)`` splits a decoded leaf:
    /// the same split point, and the same page keeps the same half.
    func splitLeaf(_ leaf: OverfullLeaf, editor: some TreeEditing) throws -> (left: PageReference, separator: [UInt8], right: PageReference) {
        let count = leaf.count
        let splitIndex = Self.leafSplitIndex(count: count, byteCount: leaf.byteCount, insertedAt: leaf.index, size: leaf.size)
        let own = try ownPage(of: leaf, editor: editor)
        let other = PageReference(page: try editor.allocatePage(owner: owner), birth: editor.transaction)
        let edits = leaf.edits &+ 1
        let (left, right) = leaf.index == splitIndex ? (other, own) : (own, other)
        layOutLeaf(leaf.runs(0..<splitIndex), onto: left, edits: edits, editor: editor)
        layOutLeaf(leaf.runs(splitIndex..<count), onto: right, edits: edits, editor: editor)
        return (left, leaf.key(at: splitIndex), right)
    }

    /// Settles `leaf`, child `childIndex` of `branch`, as
    /// ``balanceLeaf(_:insertedAt:in:childIndex:editor:)`` settles a decoded leaf (the same
    /// neighbour, the same cuts), laying out every page of the spread from runs of bytes.
    /// - Returns: whether the leaf was settled; when false nothing changed and the caller splits it.
    func balanceLeaf(_ leaf: OverfullLeaf, in branch: some BranchEditing, childIndex: Int, editor: some TreeEditing) throws -> Bool {
        guard leaf.index < leaf.count - 1 else { return false }
        guard let neighbour = try roomiestNeighbour(of: childIndex, in: branch, editor: editor) else { return false }
        let neighbourFirst = neighbour.index < childIndex
        let firstCount = neighbourFirst ? neighbour.count : leaf.count
        let count = leaf.count + neighbour.count
        guard let found = Self.spreadCuts(
            leaf: (leaf.count, leaf.byteCount, { leaf.size($0) }), neighbour: neighbour, neighbourFirst: neighbourFirst,
            pageSize: editor.pageSize)
        else { return false }

        func neighbourRuns(_ range: Range<Int>) -> [LeafRun] {
            guard !range.isEmpty else { return [] }
            switch neighbour.read {
            case .leafPage(let view): return [.page(view, range)]
            case .leaf(let node): return [.node(node, range)]
            case .branch, .branchPage: return []
            }
        }
        // The spread's entries `range`, over the first leaf's then the second's.
        func runs(_ range: Range<Int>) -> [LeafRun] {
            let first = range.clamped(to: 0..<firstCount)
            let second = (max(range.lowerBound, firstCount) - firstCount)..<(max(range.upperBound, firstCount) - firstCount)
            let firstRuns = first.isEmpty ? [] : (neighbourFirst ? neighbourRuns(first) : leaf.runs(first))
            let secondRuns = second.isEmpty ? [] : (neighbourFirst ? leaf.runs(second) : neighbourRuns(second))
            return firstRuns + secondRuns
        }
        func key(at entry: Int) -> [UInt8] {
            if (entry < firstCount) != neighbourFirst { return leaf.key(at: entry < firstCount ? entry : entry - firstCount) }
            let local = entry < firstCount ? entry : entry - firstCount
            switch neighbour.read {
            case .leafPage(let view): return Array(view.key(at: local))
            case .leaf(let node): return node.keys[local]
            case .branch, .branchPage: return []
            }
        }

        let edits = leaf.edits &+ 1
        let leafPage = try ownPage(of: leaf, editor: editor)
        let neighbourPage = try pageForNewBytes(replacing: branch.child(at: neighbour.index), editor: editor)
        let (leftPage, rightPage) = neighbourFirst ? (neighbourPage, leafPage) : (leafPage, neighbourPage)
        let (leftEdits, rightEdits): (UInt8, UInt8) = neighbourFirst ? (0, edits) : (edits, 0)
        let rightStart = found[found.count - 1]
        layOutLeaf(runs(0..<found[0]), onto: leftPage, edits: leftEdits, editor: editor)
        layOutLeaf(runs(rightStart..<count), onto: rightPage, edits: rightEdits, editor: editor)
        let leftIndex = min(childIndex, neighbour.index)
        branch.setChild(leftPage, at: leftIndex)
        branch.setChild(rightPage, at: leftIndex + 1)
        branch.replaceSeparator(at: leftIndex, with: key(at: rightStart))
        if found.count == 2 {
            let middle = PageReference(page: try editor.allocatePage(owner: owner), birth: editor.transaction)
            layOutLeaf(runs(found[0]..<found[1]), onto: middle, editor: editor)
            branch.insert(separator: key(at: found[0]), rightChild: middle, at: leftIndex)
        }
        return true
    }
}
