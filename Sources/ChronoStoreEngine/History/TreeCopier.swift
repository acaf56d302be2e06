// Copying trees page by page into a write transaction, renumbering every page: backups and restores.

/// Copies the catalog and collection trees of one root (read from any store) into a write
/// transaction, giving each page a new number and this transaction as its birth. Pages shared
/// within the copied trees are copied once. Cost: O(pages copied).
final class TreeCopier<Source: TreeReading> {
    let source: Source
    /// The transaction receiving copies; a copy across several commits (a backup with history)
    /// sets a new one per commit and keeps its record of what it copied.
    var destination: WriteTransaction
    private var copied: [PageReference: PageReference] = [:]
    /// Pages copied so far and the bytes they hold.
    private(set) var pageCount = 0
    /// Called after every page; throwing (for example on cancellation) stops the copy.
    var onPage: (Int) throws -> Void = { _ in }

    init(source: Source, destination: WriteTransaction) {
        self.source = source
        self.destination = destination
    }

    /// The copy of a source page, if it has been copied.
    func copy(of page: PageReference) -> PageReference? { copied[page] }

    /// Copies a catalog tree and every collection tree it names; returns the new catalog root.
    func copyCatalog(_ root: PageReference) throws -> PageReference {
        try copyTree(root, rewritesValues: true) { value in
            guard case .inline = value else { return value }
            var entry = try CollectionEntry.decode(value, page: root.page)
            entry.root = try self.copyTree(entry.root, rewritesValues: false) { $0 }
            return .inline(entry.encoded())
        }
    }

    /// Copies one tree; `transform` rewrites each leaf value (the catalog's point at subtrees).
    ///
    /// Pages are copied as bytes: a branch gets its children's new references written in place,
    /// and a leaf is only decoded when a value must change (a large value, or `rewritesValues`).
    func copyTree(
        _ root: PageReference, rewritesValues: Bool, depth: Int = 0, transform: (LeafValue) throws -> LeafValue
    ) throws -> PageReference {
        guard !root.isNone else { return .none }
        if let done = copied[root] { return done }
        try KeyInterval.checkDepth(depth, page: root.page)
        let content: DirtyPage
        switch try source.node(root) {
        case .leafPage(let view):
            if !rewritesValues && !(0..<view.count).contains(where: view.holdsLargeValue) {
                content = .raw(Self.copyOfBytes(view.page), kind: .leaf, count: view.count)
            } else {
                let leaf = NodeLayout.decodeLeaf(view.page)
                for index in leaf.values.indices {
                    leaf.replaceValue(at: index, with: try copyValue(transform(leaf.values[index])))
                }
                content = .leaf(leaf)
            }
        case .branchPage(let view):
            let buffer = Self.copyOfBytes(view.page)
            for index in 0...view.keyCount {
                let child = try copyTree(
                    view.child(at: index), rewritesValues: rewritesValues, depth: depth + 1, transform: transform)
                buffer.bytes.storeReference(child, at: view.childOffset(at: index))
            }
            content = .raw(buffer, kind: .branch, count: view.keyCount)
        case .leaf, .branch:
            throw StoreError.malformedPage(page: root.page, reason: "a copy source has unsealed pages")
        }
        let page = try destination.allocatePage(owner: .history)
        destination.setDirty(page, content)
        let reference = PageReference(page: page, birth: destination.transaction)
        copied[root] = reference
        pageCount += 1
        // Copied leaves are finished: a large copy writes them out instead of holding them.
        try destination.spillIfNeeded()
        try onPage(pageCount)
        return reference
    }

    private static func copyOfBytes(_ page: PageBuffer) -> PageBuffer {
        let copy = PageBuffer(uninitializedPageSize: page.pageSize)
        copy.bytes.copyMemory(from: page.readOnly)
        // An unsealed leaf's flags byte carries the byte-edit mark (BTree+LeafBytes.swift): a copy
        // starts unmarked, whatever the source held there.
        copy.bytes.storeLittleEndian(UInt8(0), at: PageHeader.flagsOffset)
        return copy
    }

    /// Every page of a large value: index pages, each followed by the data pages it lists.
    private static func overflowPages(_ reference: OverflowReference, reader: some TreeReading) throws -> [PageReference] {
        var pages: [PageReference] = []
        try Overflow.forEachIndexPage(reference, reader: reader) { index, data in
            pages.append(index)
            for page in data { pages.append(PageReference(page: page, birth: reference.index.birth)) }
        }
        return pages
    }

    private func copyValue(_ value: LeafValue) throws -> LeafValue {
        guard case .overflow(let reference) = value else { return value }
        if let done = copied[reference.index] { return .overflow(OverflowReference(index: done, length: reference.length)) }
        let bytes = try Overflow.read(reference, reader: source)
        let copy = try Overflow.write(bytes, owner: .history, editor: destination)
        // Record every page of the value, so a later root's dead list can name the copies.
        let originals = try Self.overflowPages(reference, reader: source)
        let copies = try Self.overflowPages(copy, reader: destination)
        for (original, copy) in zip(originals, copies) { copied[original] = copy }
        pageCount += (bytes.count + Overflow.dataCapacity(pageSize: destination.pageSize) - 1)
            / Overflow.dataCapacity(pageSize: destination.pageSize)
        try onPage(pageCount)
        return .overflow(copy)
    }
}

extension WriteTransaction {
    /// Makes `catalog` (pages this transaction wrote) the new root's catalog, replacing whatever
    /// the transaction had. With `freshLineage`, the new root shares no pages with any other root
    /// and starts a lineage of its own (a restore): the old contents stay with the old roots.
    func replaceContents(withCatalog catalog: PageReference, freshLineage: Bool) throws {
        // Earlier edits would leave pages on the deadlist of a root that claims none.
        guard invalidated.isEmpty, collections.isEmpty else { throw StoreError.transactionFinished }
        collections = CollectionEdits()
        catalogTree = BTree(root: catalog, owner: .history)
        history.forceRoot = true
        history.freshLineage = freshLineage
    }
}
