// Removing entries: copy the path, drop empty nodes, merge small neighbours, shrink the root.

extension BTree {
    /// Removes `key`. Does nothing (and copies nothing) when the key is absent.
    /// - Returns: the removed value, if any (its overflow pages are not yet released).
    mutating func remove(_ key: [UInt8], editor: some TreeEditing) throws -> LeafValue? {
        // One descent: nodes are read on the way down and copied on the way back up, once the
        // leaf has the key (a lookup first, then a copying descent, read every node twice).
        guard !root.isNone,
            let removal = try key.withUnsafeBytes({ try remove($0, from: root, depth: 0, editor: editor) })
        else { return nil }
        root = removal.reference ?? .none
        try collapseRoot(editor: editor)
        return removal.value
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

    /// What removing a key did to one subtree: its new root (nil when it became empty) and the
    /// removed value.
    private struct Removal {
        let reference: PageReference?
        let value: LeafValue
    }

    /// Removes `key` from the subtree at `reference`; nil, with nothing copied, when it lacks it.
    private func remove(
        _ key: UnsafeRawBufferPointer, from reference: PageReference, depth: Int, editor: some TreeEditing
    ) throws -> Removal? {
        try KeyInterval.checkDepth(depth, page: reference.page)
        let read = try editor.node(reference)
        let childIndex: Int
        let child: PageReference
        switch read {
        case .leafPage(let view):
            let (index, found) = view.search(key)
            guard found else { return nil }
            if reference.birth != editor.transaction {
                // A committed leaf that stays at least a quarter full: copy its bytes without the entry.
                if let edited = try removeFromLeafPage(view, index: index, at: reference, editor: editor) {
                    return Removal(reference: edited.reference, value: edited.removed)
                }
            } else if case .raw(let buffer, .leaf, _)? = editor.dirtyPage(reference.page),
                let removed = removeFromDirtyLeafPage(buffer, index: index, page: reference.page, editor: editor)
            {
                return Removal(reference: reference, value: removed)
            }
            return try removeFromLeaf(key, at: reference, read: read, editor: editor)
        case .leaf(let leaf):
            guard Self.search(leaf, key).found else { return nil }
            return try removeFromLeaf(key, at: reference, read: read, editor: editor)
        case .branchPage(let view):
            childIndex = view.childIndex(for: key)
            child = view.child(at: childIndex)
        case .branch(let node):
            childIndex = Self.childIndex(in: node, for: key)
            child = node.children[childIndex]
        }
        guard let below = try remove(key, from: child, depth: depth + 1, editor: editor) else { return nil }
        // The key was there: only now is this branch copied (a copy has the same keys, so the
        // child index found on the way down still holds).
        let (newReference, content) = try editableNode(reference, read: read, editor: editor)
        guard case .branch(let branch) = content else {
            throw StoreError.malformedPage(page: reference.page, reason: "a branch became a leaf during delete")
        }
        if let edited = below.reference {
            branch.children[childIndex] = edited
            try mergeIfSmall(childIndex, in: branch, editor: editor)
        } else {
            branch.removeChild(at: childIndex)
            if branch.children.isEmpty {
                editor.releasePage(newReference, owner: owner)
                return Removal(reference: nil, value: below.value)
            }
        }
        return Removal(reference: newReference, value: below.value)
    }

    /// Removes `key`, which the leaf at `reference` holds, through an editable copy of the leaf.
    private func removeFromLeaf(
        _ key: UnsafeRawBufferPointer, at reference: PageReference, read: NodeRead, editor: some TreeEditing
    ) throws -> Removal {
        let (newReference, content) = try editableNode(reference, read: read, editor: editor)
        guard case .leaf(let leaf) = content else {
            throw StoreError.malformedPage(page: reference.page, reason: "a leaf became a branch during delete")
        }
        let (index, found) = Self.search(leaf, key)
        guard found else { throw StoreError.malformedPage(page: reference.page, reason: "key vanished during delete") }
        let removed = leaf.values[index]
        leaf.remove(at: index)
        if leaf.keys.isEmpty {
            editor.releasePage(newReference, owner: owner)
            return Removal(reference: nil, value: removed)
        }
        return Removal(reference: newReference, value: removed)
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
