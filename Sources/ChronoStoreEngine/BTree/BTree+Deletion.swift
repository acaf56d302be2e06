// Removing entries: copy the path, drop empty nodes, merge small neighbours, shrink the root.

extension BTree {
    /// Removes `key`. Does nothing (and copies nothing) when the key is absent.
    /// - Returns: the removed value, if any (its overflow pages are not yet released).
    mutating func remove(_ key: [UInt8], editor: some TreeEditing) throws -> LeafValue? {
        guard try lookup(key, reader: editor) != nil else { return nil }
        return try remove(present: key, editor: editor)
    }

    /// Removes `key`, which the caller just found in this tree (no second lookup).
    /// - Returns: the removed value.
    @discardableResult
    mutating func remove(present key: [UInt8], editor: some TreeEditing) throws -> LeafValue {
        let (reference, removed) = try key.withUnsafeBytes { try remove($0, from: root, editor: editor) }
        root = reference ?? .none
        try collapseRoot(editor: editor)
        return removed
    }

    /// Replaces a root branch that has a single child by that child, repeatedly.
    private mutating func collapseRoot(editor: some TreeEditing) throws {
        while !root.isNone {
            let onlyChild: PageReference
            switch try editor.node(root) {
            case .branchPage(let view) where view.keyCount == 0: onlyChild = view.child(at: 0)
            case .branch(let node) where node.keys.isEmpty: onlyChild = node.children[0]
            default: return
            }
            editor.releasePage(root, owner: owner)
            root = onlyChild
        }
    }

    private func remove(
        _ key: UnsafeRawBufferPointer, from reference: PageReference, editor: some TreeEditing
    ) throws -> (PageReference?, LeafValue) {
        var read: NodeRead?
        if reference.birth != editor.transaction {
            // A committed leaf that stays at least a quarter full: copy its bytes without the entry.
            read = try editor.node(reference)
            if case .leafPage(let view)? = read, let edited = try removeFromLeafPage(view, key: key, at: reference, editor: editor) {
                return (edited.reference, edited.removed)
            }
        } else if case .raw(let buffer, .leaf, _)? = editor.dirtyPage(reference.page),
            let removed = removeFromDirtyLeafPage(buffer, key: key, page: reference.page, editor: editor)
        {
            return (reference, removed)
        }
        let (newReference, content) = try editableNode(reference, read: read, editor: editor)
        switch content {
        case .leaf(let leaf):
            let (index, found) = Self.search(leaf, key)
            guard found else { throw StoreError.malformedPage(page: reference.page, reason: "key vanished during delete") }
            let removed = leaf.values[index]
            leaf.remove(at: index)
            if leaf.keys.isEmpty {
                editor.releasePage(newReference, owner: owner)
                return (nil, removed)
            }
            return (newReference, removed)
        case .branch(let branch):
            let childIndex = Self.childIndex(in: branch, for: key)
            let (child, removed) = try remove(key, from: branch.children[childIndex], editor: editor)
            if let child {
                branch.children[childIndex] = child
                try mergeIfSmall(childIndex, in: branch, editor: editor)
            } else {
                branch.removeChild(at: childIndex)
                if branch.children.isEmpty {
                    editor.releasePage(newReference, owner: owner)
                    return (nil, removed)
                }
            }
            return (newReference, removed)
        case .raw:
            throw StoreError.malformedPage(page: reference.page, reason: "a tree points at a non-node page")
        }
    }

    /// Merges child `index` with a neighbour when it has shrunk below a quarter page and the two
    /// fit in one page. The child was just edited, so it is already this transaction's node.
    private func mergeIfSmall(_ index: Int, in branch: BranchNode, editor: some TreeEditing) throws {
        guard branch.children.count > 1, let child = editor.dirtyPage(branch.children[index].page) else { return }
        let pageSize = editor.pageSize
        switch child {
        case .leaf(let leaf) where leaf.byteCount < pageSize / 4: break
        case .branch(let node) where node.byteCount < pageSize / 4: break
        default: return
        }
        let leftIndex = index > 0 ? index - 1 : index
        let separator = branch.keys[leftIndex]
        guard try mergedByteCount(branch.children[leftIndex], branch.children[leftIndex + 1], separator, editor) <= pageSize
        else { return }
        let (leftReference, left) = try editableNode(branch.children[leftIndex], editor: editor)
        let (rightReference, right) = try editableNode(branch.children[leftIndex + 1], editor: editor)
        switch (left, right) {
        case (.leaf(let leftLeaf), .leaf(let rightLeaf)):
            leftLeaf.absorb(rightLeaf)
        case (.branch(let leftBranch), .branch(let rightBranch)):
            leftBranch.absorb(separator: separator, rightBranch)
        default:
            throw StoreError.malformedPage(page: rightReference.page, reason: "siblings of different kinds")
        }
        editor.releasePage(rightReference, owner: owner)
        branch.children[leftIndex] = leftReference
        branch.removeChild(at: leftIndex + 1)
    }

    /// The encoded size two neighbours would have as one node.
    private func mergedByteCount(
        _ left: PageReference, _ right: PageReference, _ separator: [UInt8], _ editor: some TreeEditing
    ) throws -> Int {
        func size(_ reference: PageReference) throws -> (Int, isLeaf: Bool) {
            switch try editor.node(reference) {
            case .leaf(let node): return (node.byteCount, true)
            case .branch(let node): return (node.byteCount, false)
            // A page (committed, or this transaction's leaf bytes) is sized in place: decoding it
            // only to count would copy every key.
            case .leafPage(let view): return (NodeLayout.leafLayout(view).byteCount, true)
            case .branchPage(let view): return (view.byteCount, false)
            }
        }
        let (leftSize, isLeaf) = try size(left)
        let (rightSize, _) = try size(right)
        if isLeaf { return leftSize + rightSize - NodeLayout.leafBaseByteCount }
        return leftSize + rightSize - NodeLayout.branchBaseByteCount + NodeLayout.branchEntryByteCount(key: separator)
    }
}
