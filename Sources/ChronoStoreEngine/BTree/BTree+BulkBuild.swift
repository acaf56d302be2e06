// Building a tree bottom-up from entries in key order, with every page filled: for compaction.

extension BTree {
    /// Builds a new tree holding `entries` (strictly ascending keys), packing each leaf and branch
    /// as full as a page allows. Cost: O(entries). Returns the new root.
    static func build(
        from entries: [( [UInt8], LeafValue)], owner: PageOwner, editor: some TreeEditing
    ) throws -> PageReference {
        guard !entries.isEmpty else { return .none }
        var level: [(firstKey: [UInt8], reference: PageReference)] = []
        var leaf = LeafNode()
        func flushLeaf() throws {
            guard let first = leaf.keys.first else { return }
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .leaf(leaf))
            level.append((first, PageReference(page: page, birth: editor.transaction)))
            leaf = LeafNode()
        }
        for (key, value) in entries {
            if !leaf.keys.isEmpty, leaf.byteCount + NodeLayout.leafEntryByteCount(key: key, value: value) > editor.pageSize {
                try flushLeaf()
            }
            leaf.insert(key: key, value: value, at: leaf.keys.count)
        }
        try flushLeaf()
        return try build(leaves: level, owner: owner, editor: editor)
    }

    /// Builds the branch levels above `leaves` (in key order, each with its first key), packing
    /// each branch as full as a page allows. Returns the new root.
    static func build(
        leaves: [(firstKey: [UInt8], reference: PageReference)], owner: PageOwner, editor: some TreeEditing
    ) throws -> PageReference {
        guard !leaves.isEmpty else { return .none }
        var level = leaves
        while level.count > 1 { level = try buildBranchLevel(level, owner: owner, editor: editor) }
        return level[0].reference
    }

    private static func buildBranchLevel(
        _ children: [(firstKey: [UInt8], reference: PageReference)], owner: PageOwner, editor: some TreeEditing
    ) throws -> [(firstKey: [UInt8], reference: PageReference)] {
        var parents: [(firstKey: [UInt8], reference: PageReference)] = []
        var branch: BranchNode?
        var firstKey: [UInt8] = []
        func flush() throws {
            guard let node = branch else { return }
            let page = try editor.allocatePage(owner: owner)
            editor.setDirty(page, .branch(node))
            parents.append((firstKey, PageReference(page: page, birth: editor.transaction)))
            branch = nil
        }
        for child in children {
            if let node = branch, node.byteCount + NodeLayout.branchEntryByteCount(key: child.firstKey) <= editor.pageSize {
                node.insert(separator: child.firstKey, rightChild: child.reference, at: node.keys.count)
            } else {
                try flush()
                branch = BranchNode(keys: [], children: [child.reference])
                firstKey = child.firstKey
            }
        }
        try flush()
        return parents
    }
}
