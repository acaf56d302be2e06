// Walking every page of a tree: for verification, for dropping a tree, and for recovery checks.

enum TreePages {
    /// Calls `body` with every page of the tree at `root` (nodes, then overflow pages of values),
    /// reading and verifying each node. With `bornIn`, only pages written by that transaction are
    /// visited: copy-on-write means they all hang below parents written by it too.
    static func forEach(
        in root: PageReference, reader: some TreeReading, bornIn birth: TransactionID? = nil,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        guard !root.isNone else { return }
        if let birth, root.birth != birth { return }
        switch try reader.node(root) {
        case .leafPage(let view):
            try body(root, .leaf)
            for index in 0..<view.count { try visitValue(view.value(at: index), reader, birth, body) }
        case .leaf(let node):
            try body(root, .leaf)
            for value in node.values { try visitValue(value, reader, birth, body) }
        case .branchPage(let view):
            try body(root, .branch)
            for index in 0...view.keyCount { try forEach(in: view.child(at: index), reader: reader, bornIn: birth, body) }
        case .branch(let node):
            try body(root, .branch)
            for child in node.children { try forEach(in: child, reader: reader, bornIn: birth, body) }
        }
    }

    private static func visitValue(
        _ value: LeafValue, _ reader: some TreeReading, _ birth: TransactionID?,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        guard case .overflow(let reference) = value else { return }
        if let birth, reference.index.birth != birth { return }
        try Overflow.forEachIndexPage(reference, reader: reader) { index, dataPages in
            try body(index, .overflowIndex)
            for page in dataPages { try body(PageReference(page: page, birth: reference.index.birth), .overflowData) }
        }
    }
}
