// Compaction: move live pages out of the file's tail into free pages, then cut the free tail off.

/// How far a compaction has got: pages examined out of the live pages.
package struct CompactionProgress: Equatable, Sendable {
    package var pagesDone: Int
    package var pagesTotal: Int
}

/// What a compaction achieved.
package struct CompactionReport: Equatable, Sendable {
    package var pagesMoved: Int
    package var byteCountBefore: UInt64
    package var byteCountAfter: UInt64
}

extension Store {
    /// Shrinks the file: prunes per the retention policy, rewrites the head's pages and the
    /// engine's own pages that lie beyond the space the live data needs onto free pages nearer
    /// the start, then truncates the file once its tail is free.
    ///
    /// The rewrite is one commit whose contents equal the head's; it takes the head's place in
    /// history (undo from it goes where undo from the head went) unless a reader or snapshot
    /// pins the head. Pages that older retained roots or snapshots still reach stay where they
    /// are, so with deep history the file shrinks less. Readers continue throughout; the writer
    /// waits for each of the two commits. Cost: O(live pages).
    @discardableResult
    package func compact(progress: (CompactionProgress) throws -> Void = { _ in }) throws -> CompactionReport {
        let before = try fileByteCount()
        // Pruned and durable first, so in deferred mode the head is not pinned as the crash
        // fallback (and may be replaced).
        try prune()
        try synchronize()
        var moved = 0
        for pass in 0..<2 {
            let passMoved = try relocatePass(collections: pass == 0 ? .rebuild : .moveTail, progress: pass == 0 ? progress : { _ in })
            moved += passMoved
            // Durable again, so the pages the rewrite released are reusable, and can be cut.
            try synchronize()
            try truncateFreeTail()
            // The rewritten trees could only take the free pages between the old trees' pages,
            // which the commit then freed: when that left the file more than an eighth above the
            // pages in use, one more pass moves the pages beyond the threshold into the space the
            // first one freed. It moves pages rather than rebuilding again: a second rebuild
            // needs free pages for the whole tree, which a compact file does not have, and was
            // dropped as growing the file (the quick benchmark's store kept 31 % of its pages free).
            let state = try snapshot.state
            let inUse = state.pageCount - 1 - min(state.pageCount - 1, state.freePageCount)
            guard passMoved > 0, state.pageCount - 1 > inUse + inUse / 8 else { break }
        }
        return CompactionReport(pagesMoved: moved, byteCountBefore: before, byteCountAfter: try fileByteCount())
    }

    /// One rewrite of the tail, committed; returns the pages it moved (0 when it was dropped).
    private func relocatePass(collections: CollectionTreeRewrite, progress: (CompactionProgress) throws -> Void) throws -> Int {
        let transaction = try beginWrite()
        let moved: Int
        do {
            moved = try transaction.relocateTail(collections: collections, progress: progress)
        } catch {
            transaction.abort()
            throw error
        }
        // Never grow the file: when the free pages cannot hold the rewritten trees, keep the
        // pages where they are and only cut the free tail.
        guard moved > 0 && transaction.allocator.nextPage <= transaction.base.state.pageCount else {
            transaction.abort()
            return 0
        }
        try transaction.commit()
        return moved
    }

    private func fileByteCount() throws -> UInt64 {
        do { return try pageFile.file.byteCount() } catch let error as IOError { throw StoreError.io(error) }
    }

    /// Drops free pages at the end of the file: a commit lowers the allocation mark, a sync makes
    /// it durable (so no fallback state needs the tail), then the file is cut.
    func truncateFreeTail() throws {
        let transaction = try beginWrite()
        let end: UInt64
        do {
            try transaction.loadEveryReusablePage()
            end = transaction.dropFreeTail()
        } catch {
            transaction.abort()
            throw error
        }
        guard end < transaction.base.state.pageCount else {
            transaction.abort()
            return
        }
        transaction.history.forceState = true
        try transaction.commit()
        try withWriterHeld {
            // Durable before the cut, so no fallback state needs the tail; and under the writer
            // lock, so no commit can extend the file between reading the mark and cutting.
            try makePublishedDurable()
            let current = lock.withLock { published.state.pageCount }
            do { try pageFile.file.truncate(to: current * UInt64(pageSize)) } catch let error as IOError { throw StoreError.io(error) }
            pageFile.forgetByteCount()
        }
    }
}

extension WriteTransaction {
    /// Removes the reusable pages at the very end of the file from the pool and lowers the
    /// allocation mark past them. Returns the new mark.
    func dropFreeTail() -> UInt64 {
        let free = Set(allocator.pool.map(\.rawValue))
        var end = allocator.nextPage
        while end > 2, free.contains(end - 1) { end -= 1 }
        allocator.pool.removeAll { $0.rawValue >= end }
        allocator.nextPage = end
        return end
    }

    /// Rebuilds the head's collection trees with full pages on the lowest free pages (or, with
    /// `.moveTail`, copies only their pages beyond the threshold lower), and rewrites every page of
    /// the catalog and the engine's trees that lies at or beyond the page count the live data
    /// needs. Returns how many pages moved out of the tail.
    func relocateTail(collections: CollectionTreeRewrite, progress: (CompactionProgress) throws -> Void) throws -> Int {
        try loadEveryReusablePage()
        let state = base.state
        let live = state.pageCount - 1 - state.freePageCount
        let threshold = live + 1 + live / 64
        return try withoutActuallyEscaping(progress) { progress in
            var relocator = Relocator(threshold: threshold, total: Int(live), collections: collections, progress: progress)
            catalogTree.root = try relocator.relocate(catalogTree.root, owner: .history, catalog: true, in: self)
            if relocator.moved > 0 || !introducedPages.isEmpty { history.replacesHead = true }
            history.relocationThreshold = threshold
            let freeTreeRoot = try relocator.relocate(allocator.freeTree.root, owner: .system, catalog: false, in: self)
            allocator.freeTree.pagesMoved(to: freeTreeRoot)
            let rekeyed = try rekeyPackIndexBirthFirst()
            return relocator.moved + rekeyed + (try relocatePackPages(threshold: threshold))
        }
    }
}

/// How a compaction pass rewrites the collection trees the catalog names.
enum CollectionTreeRewrite {
    /// Rebuilt bottom-up with full pages on the lowest free pages (the first pass).
    case rebuild
    /// Only nodes beyond the threshold (and their ancestors) copied lower, as every other tree's
    /// are (the second pass: the trees are dense already, and a rebuild needs free pages for a
    /// whole tree).
    case moveTail
}

/// The walk behind compaction: copies a node onto a lower page when it, or anything below it,
/// lies at or beyond the threshold.
struct Relocator {
    let threshold: UInt64
    let total: Int
    /// How the catalog's collection trees are rewritten: nil when the walk meets no catalog (the
    /// commit's walk of the engine's trees), which also means it never spills.
    let collections: CollectionTreeRewrite?
    let progress: (CompactionProgress) throws -> Void
    private(set) var moved = 0
    private var examined = 0

    init(
        threshold: UInt64, total: Int, collections: CollectionTreeRewrite?,
        progress: @escaping (CompactionProgress) throws -> Void
    ) {
        self.threshold = threshold
        self.total = total
        self.collections = collections
        self.progress = progress
    }

    mutating func relocate(
        _ reference: PageReference, owner: PageOwner, catalog: Bool, in transaction: WriteTransaction, depth: Int = 0
    ) throws -> PageReference {
        guard !reference.isNone else { return reference }
        try KeyInterval.checkDepth(depth, page: reference.page)
        examined += 1
        if examined % 1024 == 0 {
            if Task.isCancelled { throw CancellationError() }
            try progress(CompactionProgress(pagesDone: examined, pagesTotal: max(total, examined)))
        }
        var values: [Int: LeafValue] = [:]
        var children: [Int: PageReference] = [:]
        switch try transaction.node(reference) {
        case .leafPage(let view):
            for index in 0..<view.count {
                if catalog {
                    var entry = try CollectionEntry.decode(view.value(at: index), page: reference.page)
                    let root = collections == .moveTail
                        ? try relocate(entry.root, owner: .history, catalog: false, in: transaction)
                        : try rebuild(entry.root, in: transaction)
                    if root != entry.root {
                        entry.root = root
                        values[index] = .inline(entry.encoded())
                    }
                } else if view.holdsLargeValue(index), case .overflow(let large) = view.value(at: index),
                    try needsMove(large, transaction)
                {
                    let bytes = try Overflow.read(large, reader: transaction)
                    try Overflow.release(large, owner: owner, editor: transaction)
                    values[index] = .overflow(try Overflow.write(bytes, owner: owner, editor: transaction))
                    moved += 1
                }
            }
        case .branchPage(let view):
            for index in 0...view.keyCount {
                let child = view.child(at: index)
                let relocated = try relocate(child, owner: owner, catalog: catalog, in: transaction, depth: depth + 1)
                if relocated != child { children[index] = relocated }
            }
        case .leaf, .branch:
            // Already rewritten by this transaction, onto a low page.
            return reference
        }
        guard reference.page.rawValue >= threshold || !values.isEmpty || !children.isEmpty else { return reference }
        let (copy, content) = try BTree(root: reference, owner: owner).editableNode(reference, editor: transaction)
        switch content {
        case .leaf(let leaf): for (index, value) in values { leaf.replaceValue(at: index, with: value) }
        case .branch(let branch): for (index, child) in children { branch.children[index] = child }
        case .raw: break
        }
        if reference.page.rawValue >= threshold { moved += 1 }
        // A leaf's copy is finished (its parent only records where it went): before the commit,
        // past the dirty limit, it is written out early like any large transaction's leaves.
        if collections != nil, case .leaf = content { try transaction.spillIfNeeded() }
        return copy
    }

    /// Rebuilds a collection tree with every page full, on the lowest free pages; large values
    /// beyond the threshold move too. The old tree's nodes go on the deadlist.
    ///
    /// The entries are copied from the old leaves as bytes (`LeafPageBuilder`), in key order as a
    /// walk of the old tree meets them; only an entry whose large value moves is laid out anew.
    private mutating func rebuild(_ root: PageReference, in transaction: WriteTransaction) throws -> PageReference {
        guard !root.isNone else { return root }
        var oldNodes: [PageReference] = []
        try collectNodes(root, transaction, into: &oldNodes)
        var builder = LeafPageBuilder(pageSize: transaction.pageSize, owner: .history)
        for node in oldNodes {
            switch try transaction.node(node) {
            case .leafPage(let view):
                for index in 0..<view.count {
                    if view.holdsLargeValue(index), case .overflow(let large) = view.value(at: index), try needsMove(large, transaction) {
                        let moved = try moveLargeValue(large, in: transaction)
                        try builder.append(key: view.key(at: index), value: moved, page: node.page, editor: transaction)
                    } else {
                        try builder.append(view, index, page: node.page, editor: transaction)
                    }
                }
            case .branchPage:
                continue
            case .leaf, .branch:
                // The first pass rebuilds each collection tree before anything edits it in this
                // transaction; a decoded node here (whose children `collectNodes` would not have
                // walked) means that no longer holds, and rebuilding would drop entries.
                throw StoreError.malformedPage(page: node.page, reason: "compaction met a collection tree edited before its rebuild")
            }
            // The new leaves written so far are finished: past the dirty limit they are written
            // out like any large transaction's.
            try transaction.spillIfNeeded()
        }
        for node in oldNodes {
            transaction.releasePage(node, owner: .history)
            if node.page.rawValue >= threshold { moved += 1 }
        }
        examined += oldNodes.count
        try progress(CompactionProgress(pagesDone: examined, pagesTotal: max(total, examined)))
        return try builder.finish(editor: transaction)
    }

    /// Copies a large value onto pages below the threshold; the old pages go on the deadlist.
    private func moveLargeValue(_ large: OverflowReference, in transaction: WriteTransaction) throws -> LeafValue {
        let bytes = try Overflow.read(large, reader: transaction)
        try Overflow.release(large, owner: .history, editor: transaction)
        return .overflow(try Overflow.write(bytes, owner: .history, editor: transaction))
    }

    private func collectNodes(
        _ reference: PageReference, _ transaction: WriteTransaction, depth: Int = 0, into nodes: inout [PageReference]
    ) throws {
        try KeyInterval.checkDepth(depth, page: reference.page)
        nodes.append(reference)
        if case .branchPage(let view) = try transaction.node(reference) {
            for index in 0...view.keyCount { try collectNodes(view.child(at: index), transaction, depth: depth + 1, into: &nodes) }
        }
    }

    private func needsMove(_ value: OverflowReference, _ transaction: WriteTransaction) throws -> Bool {
        var beyond = false
        try Overflow.forEachIndexPage(value, reader: transaction) { index, data in
            if index.page.rawValue >= threshold || data.contains(where: { $0.rawValue >= threshold }) { beyond = true }
        }
        return beyond
    }
}
