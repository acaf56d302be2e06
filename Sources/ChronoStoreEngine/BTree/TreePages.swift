// Walking every page of a tree: for verification, for dropping a tree, and for recovery checks.

enum TreePages {
    /// Calls `body` with every page of the tree at `root` (nodes, then overflow pages of values),
    /// reading and verifying each node. With `bornIn`, only pages written by that transaction are
    /// visited: copy-on-write means they all hang below parents written by it too.
    /// - Throws: a damage ``StoreError`` when a page is damaged, when the tree is deeper than
    ///   ``KeyInterval/maximumDepth``, or when a node is reached twice (a cycle or a shared child).
    static func forEach(
        in root: PageReference, reader: some TreeReading, bornIn birth: TransactionID? = nil,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        // Keyed by reference, not page number: with packed history one tree may hold a packed
        // version of page p and, elsewhere, the newer page now in slot p.
        var seen: Set<PageReference> = []
        try visit(root, reader, birth, depth: 0, &seen, body)
    }

    private static func visit(
        _ reference: PageReference, _ reader: some TreeReading, _ birth: TransactionID?, depth: Int,
        _ seen: inout Set<PageReference>, _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        guard !reference.isNone else { return }
        if let birth, reference.birth != birth { return }
        try KeyInterval.checkDepth(depth, page: reference.page)
        guard seen.insert(reference).inserted else {
            throw StoreError.malformedPage(page: reference.page, reason: "page is reached twice in one tree")
        }
        switch try reader.node(reference) {
        case .leafPage(let view):
            try body(reference, .leaf)
            for index in 0..<view.count { try visitValue(view.value(at: index), reader, birth, body) }
        case .leaf(let node):
            try body(reference, .leaf)
            for value in node.values { try visitValue(value, reader, birth, body) }
        case .branchPage(let view):
            try body(reference, .branch)
            for index in 0...view.keyCount { try visit(view.child(at: index), reader, birth, depth: depth + 1, &seen, body) }
        case .branch(let node):
            try body(reference, .branch)
            for child in node.children { try visit(child, reader, birth, depth: depth + 1, &seen, body) }
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

    /// Calls `body` with every page of the tree at `root` born after `floor` (nodes, then overflow
    /// pages of values), reading and verifying each node: copy-on-write puts every page born
    /// after `floor` below a parent born after it too. Pages in `visited` (from trees walked
    /// before) are passed over with what hangs below them, and the ones visited are added, so
    /// trees sharing pages (the roots of several commits) are walked in time proportional to their
    /// distinct pages. A page reached twice within this tree is damage, as for the walk above.
    static func forEach(
        in root: PageReference, reader: some TreeReading, bornAfter floor: TransactionID,
        visited: inout Set<PageReference>, _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        var seen: Set<PageReference> = []
        try visit(root, reader, after: floor, depth: 0, &seen, &visited, body)
    }

    private static func visit(
        _ reference: PageReference, _ reader: some TreeReading, after floor: TransactionID, depth: Int,
        _ seen: inout Set<PageReference>, _ visited: inout Set<PageReference>,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        guard !reference.isNone, reference.birth > floor else { return }
        try KeyInterval.checkDepth(depth, page: reference.page)
        guard seen.insert(reference).inserted else {
            throw StoreError.malformedPage(page: reference.page, reason: "page is reached twice in one tree")
        }
        guard visited.insert(reference).inserted else { return }
        func value(_ value: LeafValue) throws {
            guard case .overflow(let overflow) = value, overflow.index.birth > floor else { return }
            try Overflow.forEachIndexPage(overflow, reader: reader) { index, dataPages in
                try body(index, .overflowIndex)
                for page in dataPages { try body(PageReference(page: page, birth: overflow.index.birth), .overflowData) }
            }
        }
        switch try reader.node(reference) {
        case .leafPage(let view):
            try body(reference, .leaf)
            for index in 0..<view.count { try value(view.value(at: index)) }
        case .leaf(let node):
            try body(reference, .leaf)
            for leafValue in node.values { try value(leafValue) }
        case .branchPage(let view):
            try body(reference, .branch)
            for index in 0...view.keyCount { try visit(view.child(at: index), reader, after: floor, depth: depth + 1, &seen, &visited, body) }
        case .branch(let node):
            try body(reference, .branch)
            for child in node.children { try visit(child, reader, after: floor, depth: depth + 1, &seen, &visited, body) }
        }
    }
}
