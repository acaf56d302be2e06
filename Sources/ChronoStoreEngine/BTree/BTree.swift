// A copy-on-write B+tree over byte keys and values: its root, lookups and limits.

/// A B+tree identified by its root page. Editing returns a new root; sealed pages are never
/// changed, so every older root still describes its own version of the tree.
struct BTree {
    /// The root page, or ``PageReference/none`` for an empty tree.
    var root: PageReference
    /// Where released pages go.
    let owner: PageOwner

    init(root: PageReference, owner: PageOwner) {
        self.root = root
        self.owner = owner
    }

    /// The value stored under `key`, as the leaf holds it.
    /// - Throws: a damage ``StoreError`` when a page is damaged or the descent is deeper than
    ///   ``KeyInterval/maximumDepth`` (a page cycle).
    func lookup(_ key: UnsafeRawBufferPointer, reader: some TreeReading) throws -> LeafValue? {
        switch try entry(key, reader: reader) {
        case .page(let view, let index)?: view.value(at: index)
        case .node(let node, let index)?: node.values[index]
        case nil: nil
        }
    }

    func lookup(_ key: [UInt8], reader: some TreeReading) throws -> LeafValue? {
        try key.withUnsafeBytes { try lookup($0, reader: reader) }
    }

    /// Whether the tree holds `key`, without copying its value out (a delete checks this before
    /// copying any page; copying the value cost about a third of the check).
    func contains(_ key: [UInt8], reader: some TreeReading) throws -> Bool {
        try key.withUnsafeBytes { try entry($0, reader: reader) != nil }
    }

    /// Where a key's entry lies: in a leaf page, or in a leaf this transaction decoded.
    private enum EntryPosition {
        case page(LeafView, Int)
        case node(LeafNode, Int)
    }

    private func entry(_ key: UnsafeRawBufferPointer, reader: some TreeReading) throws -> EntryPosition? {
        var reference = root
        var depth = 0
        while !reference.isNone {
            try KeyInterval.checkDepth(depth, page: reference.page)
            depth += 1
            switch try reader.node(reference) {
            case .branchPage(let view):
                reference = view.child(at: view.childIndex(for: key))
            case .branch(let node):
                reference = node.children[Self.childIndex(in: node, for: key)]
            case .leafPage(let view):
                let (index, found) = view.search(key)
                return found ? .page(view, index) : nil
            case .leaf(let node):
                let (index, found) = Self.search(node, key)
                return found ? .node(node, index) : nil
            }
        }
        return nil
    }

    /// Searches a local copy of the node's keys: an access to a class's stored property that
    /// stays open across a closure forces run-time exclusivity checks on every access to that
    /// property (15-18 % of bulk loads and deletes; issue 14), while one read into a local lets
    /// the optimizer check them all statically.
    static func search(_ node: LeafNode, _ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        let keys = node.keys
        return KeyOrder.search(count: keys.count) { index in keys[index].withUnsafeBytes { KeyOrder.compare($0, key) } }
    }

    static func childIndex(in node: BranchNode, for key: UnsafeRawBufferPointer) -> Int {
        let keys = node.keys
        return KeyOrder.childIndex(count: keys.count) { index in keys[index].withUnsafeBytes { KeyOrder.compare($0, key) } }
    }

    /// Checks a key against the store's limits.
    static func validateKey(_ key: [UInt8], pageSize: Int) throws {
        if key.isEmpty { throw StoreError.emptyKey }
        let limit = NodeLayout.maximumKeyByteCount(pageSize: pageSize)
        if key.count > limit { throw StoreError.keyTooLarge(byteCount: key.count, limit: limit) }
    }
}
