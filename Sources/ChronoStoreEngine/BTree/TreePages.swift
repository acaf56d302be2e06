// Walking every page of a tree: for verification, for dropping a tree, and for recovery checks.

enum TreePages {
    /// Calls `body` with every page of the tree at `root` (nodes, then overflow pages of values),
    /// reading and verifying each node. With `bornAfter`, only pages born after that transaction
    /// are visited: copy-on-write puts every such page below a parent born after it too.
    /// - Throws: a damage ``StoreError`` when a page is damaged, when the tree is deeper than
    ///   ``KeyInterval/maximumDepth``, or when a node is reached twice (a cycle or a shared child).
    static func forEach(
        in root: PageReference, reader: some TreeReading, bornAfter floor: TransactionID? = nil,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        // Keyed by reference, not page number: with packed history one tree may hold a packed
        // version of page p and, elsewhere, the newer page now in slot p.
        var seen: Set<PageReference> = []
        try visit(root, reader, after: floor, depth: 0, &seen, nil, body)
    }

    /// ``forEach(in:reader:bornAfter:_:)`` for trees sharing pages (the roots of several
    /// commits): pages in `visited`, from trees walked before, are passed over with what hangs
    /// below them, and the pages visited are added, so the trees are walked in time proportional
    /// to their distinct pages. A page reached twice is damage only within what this walk visits.
    static func forEach(
        in root: PageReference, reader: some TreeReading, bornAfter floor: TransactionID,
        visited: inout Set<PageReference>, _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        var seen: Set<PageReference> = []
        try withUnsafeMutablePointer(to: &visited) { try visit(root, reader, after: floor, depth: 0, &seen, $0, body) }
    }

    private static func visit(
        _ reference: PageReference, _ reader: some TreeReading, after floor: TransactionID?, depth: Int,
        _ seen: inout Set<PageReference>, _ visited: UnsafeMutablePointer<Set<PageReference>>?,
        _ body: (PageReference, PageKind) throws -> Void
    ) throws {
        guard !reference.isNone, floor.map({ reference.birth > $0 }) ?? true else { return }
        try KeyInterval.checkDepth(depth, page: reference.page)
        guard seen.insert(reference).inserted else {
            throw StoreError.malformedPage(page: reference.page, reason: "page is reached twice in one tree")
        }
        if let visited, !visited.pointee.insert(reference).inserted { return }
        func value(_ value: LeafValue) throws {
            guard case .overflow(let overflow) = value, floor.map({ overflow.index.birth > $0 }) ?? true else { return }
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
            for index in 0...view.keyCount { try visit(view.child(at: index), reader, after: floor, depth: depth + 1, &seen, visited, body) }
        case .branch(let node):
            try body(reference, .branch)
            for child in node.children { try visit(child, reader, after: floor, depth: depth + 1, &seen, visited, body) }
        }
    }
}
