// Inserting and replacing entries: copy the path to the leaf, balance or split nodes that overflow.

extension BTree {
    private struct InsertResult {
        var reference: PageReference
        var split: (separator: [UInt8], right: PageReference)?
        var previous: LeafValue?
        /// A leaf the insert left larger than a page, and where the entry went: the parent
        /// balances it with a neighbour or splits it (see ``settle(_:at:childIndex:child:split:overflow:previous:editor:)``).
        var overflow: LeafOverflow?
    }

    /// A leaf an insert overfilled: a decoded leaf already holding the entry (at `insertedAt`),
    /// or a leaf in page form the put would overfill, not yet changed, which the parent balances
    /// or splits as bytes (``balanceLeaf(_:in:childIndex:editor:)``). One optional of this enum
    /// keeps the result as small as before: every level of an insert returns one.
    private enum LeafOverflow {
        case node(LeafNode, insertedAt: Int)
        case bytes(OverfullLeaf)
    }

    /// Stores `value` under `key`, replacing any value there.
    /// - Returns: the value that was replaced, if any (its overflow pages are not yet released).
    mutating func put(_ key: [UInt8], _ value: LeafValue, editor: some TreeEditing) throws -> LeafValue? {
        guard !root.isNone else {
            let leaf = LeafNode(keys: [key], values: [value])
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .leaf(leaf))
            root = PageReference(page: page, birth: editor.transaction)
            return nil
        }
        var result = try key.withUnsafeBytes { try insert(key, $0, value, into: root, depth: 0, editor: editor) }
        root = result.reference
        if let overflow = result.overflow {
            // A root leaf has no neighbour: it splits.
            let split = switch overflow {
            case .node(let leaf, let index): try splitLeaf(leaf, at: result.reference, insertedAt: index, editor: editor)
            case .bytes(let leaf): try splitLeaf(leaf, editor: editor)
            }
            result.reference = split.left
            result.split = (split.separator, split.right)
        }
        if let split = result.split {
            let branch = BranchNode(keys: [split.separator], children: [result.reference, split.right])
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .branch(branch))
            root = PageReference(page: page, birth: editor.transaction)
        }
        return result.previous
    }

    /// The editable copy of the node at `reference`: the node itself when this transaction
    /// already wrote it, else a decoded copy on a newly allocated page (the old page released).
    /// `read` is the node as `editor.node(reference)` returned it, when the caller has it.
    func editableNode(_ reference: PageReference, read: NodeRead? = nil, editor: some TreeEditing) throws -> (PageReference, DirtyPage) {
        if reference.birth == editor.transaction, let dirty = editor.dirtyPage(reference.page) {
            // A node this transaction copied as bytes becomes an editable node on the same page.
            switch dirty {
            case .raw(let buffer, .leaf, _):
                let node = DirtyPage.leaf(NodeLayout.decodeLeaf(buffer))
                editor.setDirty(reference.page, node)
                return (reference, node)
            case .raw(let buffer, .branch, _):
                let node = DirtyPage.branch(NodeLayout.decodeBranch(buffer))
                editor.setDirty(reference.page, node)
                return (reference, node)
            default:
                return (reference, dirty)
            }
        }
        let copy: DirtyPage
        switch try read ?? editor.node(reference) {
        case .leafPage(let view): copy = .leaf(NodeLayout.decodeLeaf(view.page))
        case .branchPage(let view): copy = .branch(NodeLayout.decodeBranch(view.page))
        case .leaf(let node): copy = .leaf(node)
        case .branch(let node): copy = .branch(node)
        }
        let page = try editor.allocateCopy(of: reference, owner: owner)
        editor.setDirty(page, copy)
        return (PageReference(page: page, birth: editor.transaction), copy)
    }

    private func insert(
        _ key: [UInt8], _ keyBytes: UnsafeRawBufferPointer, _ value: LeafValue, into reference: PageReference,
        depth: Int, editor: some TreeEditing
    ) throws -> InsertResult {
        try KeyInterval.checkDepth(depth, page: reference.page)
        // Committed nodes are read here; of this transaction's own, a branch still held as bytes
        // is edited as bytes, a leaf held as bytes that may take another byte edit likewise, and a
        // decoded node as a node.
        var read: NodeRead?
        if reference.birth != editor.transaction {
            read = try editor.node(reference)
        } else {
            switch editor.dirtyPage(reference.page) {
            case .raw(let buffer, .branch, _)?:
                return try insert(
                    key, keyBytes, value, belowBranchPage: BranchView(page: buffer), at: reference, ownBytes: buffer,
                    depth: depth, editor: editor)
            case .raw(let buffer, .leaf, _)?:
                // A leaf this transaction copied as bytes: edited as bytes again while it may be
                // (else `editableNode` below decodes it on the same page).
                if let edited = putInDirtyLeafPage(buffer, key: keyBytes, value: value, page: reference.page, editor: editor) {
                    return InsertResult(reference: reference, previous: edited.previous)
                }
                // No room: the parent settles it as bytes while it may take byte edits.
                if let edits = byteEditsLeft(of: buffer) {
                    let overfull = overfullLeaf(
                        LeafView(page: buffer), key: key, keyBytes: keyBytes, value: value, at: reference, edits: edits)
                    return InsertResult(reference: reference, previous: overfull.previous, overflow: .bytes(overfull))
                }
            case .leaf(let leaf)?:
                return try insert(key, keyBytes, value, intoLeaf: leaf, at: reference, editor: editor)
            case .branch(let branch)?:
                return try insert(key, keyBytes, value, below: branch, at: reference, depth: depth, editor: editor)
            default:
                break
            }
        }
        switch read {
        case .leafPage(let view)?:
            // A committed leaf with room: copy its bytes with the edit (no decode, no split).
            if let edited = try putInLeafPage(view, key: keyBytes, value: value, at: reference, editor: editor) {
                return InsertResult(reference: edited.reference, previous: edited.previous)
            }
            // No room: the parent splits it, or shares it with a neighbour, as bytes.
            let overfull = overfullLeaf(view, key: key, keyBytes: keyBytes, value: value, at: reference, edits: 0)
            return InsertResult(reference: reference, previous: overfull.previous, overflow: .bytes(overfull))
        case .branchPage(let view)?:
            return try insert(
                key, keyBytes, value, belowBranchPage: view, at: reference, ownBytes: nil, depth: depth, editor: editor)
        default:
            break
        }
        let (newReference, content) = try editableNode(reference, read: read, editor: editor)
        switch content {
        case .leaf(let leaf):
            return try insert(key, keyBytes, value, intoLeaf: leaf, at: newReference, editor: editor)
        case .branch(let branch):
            return try insert(key, keyBytes, value, below: branch, at: newReference, depth: depth, editor: editor)
        case .raw:
            throw StoreError.malformedPage(page: reference.page, reason: "a tree points at a non-node page")
        }
    }

    /// Inserts below a decoded branch of this transaction.
    private func insert(
        _ key: [UInt8], _ keyBytes: UnsafeRawBufferPointer, _ value: LeafValue, below branch: BranchNode,
        at reference: PageReference, depth: Int, editor: some TreeEditing
    ) throws -> InsertResult {
        let childIndex = Self.childIndex(in: branch, for: keyBytes)
        let child = try insert(key, keyBytes, value, into: branch.children[childIndex], depth: depth + 1, editor: editor)
        return try settle(branch, at: reference, childIndex: childIndex, child: child.reference, split: child.split,
            overflow: child.overflow, previous: child.previous, editor: editor)
    }

    /// Inserts below a branch still in page form (committed, or this transaction's byte copy,
    /// `ownBytes`): when the child does not split, only the branch's pointer to it changes, on
    /// the bytes; a split or spread below changes separators, on the bytes too while the branch
    /// may take another layout (``settleOnBytes``), else on the decoded branch.
    private func insert(
        _ key: [UInt8], _ keyBytes: UnsafeRawBufferPointer, _ value: LeafValue, belowBranchPage view: BranchView,
        at reference: PageReference, ownBytes: PageBuffer?, depth: Int, editor: some TreeEditing
    ) throws -> InsertResult {
        let childIndex = view.childIndex(for: keyBytes)
        let child = try insert(key, keyBytes, value, into: view.child(at: childIndex), depth: depth + 1, editor: editor)
        guard child.split != nil || child.overflow != nil else {
            let edited = try replaceChildOnBytes(
                view, at: reference, index: childIndex, with: child.reference, inPlace: ownBytes, editor: editor)
            return InsertResult(reference: edited, previous: child.previous)
        }
        if let layouts = branchLayoutsTaken(of: ownBytes, editor: editor) {
            return try settleOnBytes(
                view, at: reference, ownBytes: ownBytes, layouts: layouts, childIndex: childIndex, child: child, editor: editor)
        }
        let (newReference, content) = try editableNode(reference, read: .branchPage(view), editor: editor)
        guard case .branch(let branch) = content else {
            throw StoreError.malformedPage(page: reference.page, reason: "a branch page did not decode as a branch")
        }
        return try settle(branch, at: newReference, childIndex: childIndex, child: child.reference, split: child.split,
            overflow: child.overflow, previous: child.previous, editor: editor)
    }

    /// Puts `value` under `key` in a decoded leaf of this transaction; a leaf that no longer fits
    /// its page is handed up as the result's `overflow`, for the parent to balance or split.
    private func insert(
        _ key: [UInt8], _ keyBytes: UnsafeRawBufferPointer, _ value: LeafValue, intoLeaf leaf: LeafNode,
        at reference: PageReference, editor: some TreeEditing
    ) throws -> InsertResult {
        let (index, found) = Self.search(leaf, keyBytes)
        var previous: LeafValue?
        if found {
            previous = leaf.values[index]
            leaf.replaceValue(at: index, with: value)
        } else {
            leaf.insert(key: key, value: value, at: index)
        }
        guard leaf.byteCount > editor.pageSize else { return InsertResult(reference: reference, previous: previous) }
        return InsertResult(reference: reference, previous: previous, overflow: .node(leaf, insertedAt: index))
    }

    /// Splits an over-full leaf of this transaction (entry `index` just inserted or replaced): its
    /// upper part moves to a new page.
    /// - Returns: the separator (the new page's first key) and the new page.
    /// Splits this transaction's over-full `leaf` (on the page `reference`) in two.
    ///
    /// A split at the right edge (an append) leaves a full left leaf that later appends never
    /// touch, and a right leaf they edit every commit; the right one keeps the leaf's page, which
    /// the allocator placed with the pages the next commit replaces again, and the left one moves
    /// to the new page (see `AllocatorState`). Other splits keep the left half on the page.
    private func splitLeaf(
        _ leaf: LeafNode, at reference: PageReference, insertedAt index: Int, editor: some TreeEditing
    ) throws -> (left: PageReference, separator: [UInt8], right: PageReference) {
        let (keys, values) = (leaf.keys, leaf.values)
        let splitIndex = Self.leafSplitIndex(count: keys.count, byteCount: leaf.byteCount, insertedAt: index) {
            NodeLayout.leafEntryByteCount(key: keys[$0], value: values[$0])
        }
        let right = leaf.splitOff(from: splitIndex)
        let page = PageReference(page: try editor.allocatePage(owner: owner), birth: editor.transaction)
        if index == splitIndex {
            editor.setDirty(page.page, .leaf(leaf))
            editor.setDirty(reference.page, .leaf(right))
            return (page, right.keys[0], reference)
        }
        editor.setDirty(page.page, .leaf(right))
        return (reference, right.keys[0], page)
    }

    /// Records a child's edit in the decoded `branch` (see ``settleChild(_:childIndex:child:split:overflow:editor:)``),
    /// splitting the branch in turn when it overflows.
    private func settle(
        _ branch: BranchNode, at reference: PageReference, childIndex: Int, child: PageReference,
        split: (separator: [UInt8], right: PageReference)?, overflow: LeafOverflow?,
        previous: LeafValue?, editor: some TreeEditing
    ) throws -> InsertResult {
        try settleChild(branch, childIndex: childIndex, child: child, split: split, overflow: overflow, editor: editor)
        return try splitIfOverfull(branch, at: reference, previous: previous, editor: editor)
    }

    /// Records a child's edit in `branch`: its new page, and the separator and right sibling of a
    /// split; an over-full leaf child is first balanced with a neighbour, else split.
    private func settleChild(
        _ branch: some BranchEditing, childIndex: Int, child: PageReference,
        split: (separator: [UInt8], right: PageReference)?, overflow: LeafOverflow?, editor: some TreeEditing
    ) throws {
        branch.setChild(child, at: childIndex)
        var split = split
        if case .bytes(let leaf)? = overflow, try !balanceLeaf(leaf, in: branch, childIndex: childIndex, editor: editor) {
            let leafSplit = try splitLeaf(leaf, editor: editor)
            branch.setChild(leafSplit.left, at: childIndex)
            split = (leafSplit.separator, leafSplit.right)
        }
        if case .node(let leaf, let index)? = overflow,
            try !balanceLeaf(leaf, insertedAt: index, in: branch, childIndex: childIndex, editor: editor)
        {
            let leafSplit = try splitLeaf(leaf, at: child, insertedAt: index, editor: editor)
            branch.setChild(leafSplit.left, at: childIndex)
            split = (leafSplit.separator, leafSplit.right)
        }
        if let split {
            branch.insert(separator: split.separator, rightChild: split.right, at: childIndex)
        }
    }

    /// The result of an insert below the decoded `branch` (on `reference`): it, and its right
    /// half on a new page when it no longer fits one.
    private func splitIfOverfull(
        _ branch: BranchNode, at reference: PageReference, previous: LeafValue?, editor: some TreeEditing
    ) throws -> InsertResult {
        guard branch.byteCount > editor.pageSize else {
            return InsertResult(reference: reference, previous: previous)
        }
        let (separator, right) = branch.split()
        let page = try editor.allocatePage(owner: owner)
        editor.setDirty(page, .branch(right))
        return InsertResult(
            reference: reference, split: (separator, PageReference(page: page, birth: editor.transaction)),
            previous: previous)
    }

    /// ``settle(_:at:childIndex:child:split:overflow:previous:editor:)`` for a branch in page form
    /// (committed, or this transaction's bytes, `ownBytes`), without decoding it: the edits go
    /// through a ``BranchEdit`` and the branch is laid out as bytes again, unless it overflows
    /// (then it is decoded and split). The branch's page is taken first, as `editableNode` takes
    /// it, so the pages land where the decoding path puts them (`BranchBytesEditTests` compares
    /// the two).
    private func settleOnBytes(
        _ view: BranchView, at reference: PageReference, ownBytes: PageBuffer?, layouts: UInt8, childIndex: Int,
        child: InsertResult, editor: some TreeEditing
    ) throws -> InsertResult {
        let page = ownBytes != nil
            ? reference : PageReference(page: try editor.allocateCopy(of: reference, owner: owner), birth: editor.transaction)
        let edit = BranchEdit(view)
        try settleChild(
            edit, childIndex: childIndex, child: child.reference, split: child.split, overflow: child.overflow, editor: editor)
        guard edit.byteCount <= editor.pageSize else {
            let branch = edit.decoded()
            editor.setDirty(page.page, .branch(branch))
            return try splitIfOverfull(branch, at: page, previous: child.previous, editor: editor)
        }
        let buffer = edit.laidOut(pageSize: editor.pageSize)
        Self.markBranchLaidOut(buffer, layouts: layouts + 1)
        editor.setDirty(page.page, .raw(buffer, kind: .branch, count: edit.keyCount))
        return InsertResult(reference: page, previous: child.previous)
    }

    /// Where to split an over-full leaf of `count` entries (`size(entry)` bytes each, `byteCount`
    /// in all; entry `index` just put): an insert at the right edge (ascending keys) leaves the
    /// left page full; otherwise the bytes are shared evenly.
    static func leafSplitIndex(count: Int, byteCount: Int, insertedAt index: Int, size: (Int) -> Int) -> Int {
        if index == count - 1 { return count - 1 }
        let half = byteCount / 2
        var running = NodeLayout.leafBaseByteCount
        for entry in 0..<count {
            running += size(entry)
            if running >= half { return min(max(entry, 1), count - 1) }
        }
        return count / 2
    }
}
