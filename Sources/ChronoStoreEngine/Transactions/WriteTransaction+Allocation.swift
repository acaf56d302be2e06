// Page allocation: reuse released pages once safe, else extend the file; settle the free tree.

/// What the allocator of one write transaction tracks.
struct AllocatorState {
    /// The free tree as of the base state (its pages and the state journal's records for it);
    /// allocation consumes its entries in key order.
    let baseFreeTree: JournaledTree
    /// Entries released at or before this transaction are reusable.
    let horizon: TransactionID
    /// The allocation mark: the first page beyond every allocated page.
    var nextPage: UInt64
    var pinnedRoots: PinnedRoots

    /// Reusable pages taken from consumed free-tree entries that have no free neighbour among
    /// them, highest first (pop gives the lowest).
    var poolSingles: [PageID] = []
    /// Reusable pages taken from consumed free-tree entries that lie in runs of neighbouring
    /// pages, highest first. Handed out after the singles (see ``AllocatorState/split(_:)``).
    var poolRuns: [PageID] = []
    /// Set while the commit lays out its own pages (state, catalog, root page, engine trees):
    /// those take pages from runs, or from the end of the file, never single pages.
    var prefersRuns = false
    var entriesConsumedForRuns = 0
    /// Copies of the previous commit's pages that took runs so far (see `allocateCopy`).
    var copiesPlacedInRuns = 0
    /// Pages handed out from the pool without preferring runs.
    var reusedCount = 0
    /// Set once compaction loaded every reusable page (`loadEveryReusablePage`): from then on
    /// every page is the lowest free one, whatever it prefers, so compaction's copies and its
    /// commit's own pages never go past the end it is trying to cut.
    var lowestFirst = false
    /// Every reusable page taken and not yet handed out. Setting it hands them out lowest first.
    var pool: [PageID] {
        get { poolRuns + poolSingles }
        set {
            poolSingles = newValue
            poolRuns = []
        }
    }
    /// Pages this transaction allocated and then released: free again at once.
    var recycled: [PageID] = []
    /// Keys of free-tree entries consumed so far.
    var consumed: [[UInt8]] = []
    var consumedPageCount: UInt64 = 0
    var exhausted = false
    /// Pages this transaction stops using and no retained root reaches: they go into the free
    /// tree under this transaction's id.
    var released: [PageID] = []
    /// The free tree being rewritten at commit.
    var freeTree: JournaledTree
    var leftoverChunkCount = 0
    /// Set when settling the free tree takes many passes: new pages then come only from the end
    /// of the file, so the reusable pages being written down stop changing and the passes end.
    var extendOnly = false

    init(baseFreeTree: JournaledTree, horizon: TransactionID, nextPage: UInt64, pinnedRoots: PinnedRoots) {
        self.baseFreeTree = baseFreeTree
        self.freeTree = baseFreeTree
        self.horizon = horizon
        self.nextPage = nextPage
        self.pinnedRoots = pinnedRoots
    }

    /// Free pages split into single pages and runs of at least three neighbours (a pair counts
    /// as two single pages), each in reverse hand-out order for popping: singles lowest first,
    /// runs lowest first too (so a large transaction still fills the file from its start).
    ///
    /// A durable commit pays its sync by the stretch of neighbouring pages it writes much more than
    /// by the page (Docs/Performance.md, "Contiguous commit pages"). Pages the next commits are
    /// likely to replace again (copies of pages the previous commit wrote, and the state, catalog
    /// leaf and root page laid out at commit) take runs, or a new run at the end of the file;
    /// freed together, they come back as a run for a later commit. Other pages (a deep leaf and
    /// its branches) take the single pages.
    static func split(_ pages: [PageID]) -> (singles: [PageID], runs: [PageID]) {
        // Highest first, so each stretch of neighbours is appended in hand-out order as found.
        let sorted = pages.sorted(by: >)
        var singles: [PageID] = []
        var runs: [PageID] = []
        singles.reserveCapacity(sorted.count)
        runs.reserveCapacity(sorted.count)
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count && sorted[end].rawValue &+ 1 == sorted[end - 1].rawValue { end += 1 }
            if end - start >= minimumRunLength {
                for index in start..<end { runs.append(sorted[index]) }
            } else {
                for index in start..<end { singles.append(sorted[index]) }
            }
            start = end
        }
        return (singles, runs)
    }

    static let minimumRunLength = 3
    static let recurringCopiesPlacedInRuns = 16
    static let smallCommitPageCount = 32
    /// While the pool holds more single pages than this, pages that prefer runs take single pages
    /// rather than the end of the file, so the file cannot grow while many pages are free.
    static let singlesKeptBeforeExtending = 8
}

extension WriteTransaction {
    func allocatePage(owner: PageOwner) throws -> PageID {
        let page = try takeFreePage()
        if owner == .history { introducedPages.insert(page) }
        return page
    }

    func allocateCopy(of reference: PageReference, owner: PageOwner) throws -> PageID {
        // A small commit copies few pages of the previous one (the path to its edit, when the
        // previous commit edited nearby); a large one may copy thousands, and those go lowest
        // first like any other, keeping the file's tail free.
        let recurring = reference.birth == base.transaction && allocator.copiesPlacedInRuns < AllocatorState.recurringCopiesPlacedInRuns
        if recurring { allocator.copiesPlacedInRuns += 1 }
        let page = try takeFreePage(preferringRuns: recurring)
        if owner == .history { introducedPages.insert(page) }
        releasePage(reference, owner: owner)
        return page
    }

    /// A page for this transaction to write: recycled, else reused, else at the end of the file.
    /// - Parameter preferringRuns: take the page from a run of free neighbours or the end of the
    ///   file, not from the single pages (it is likely to be replaced by the next commits).
    func takeFreePage(preferringRuns: Bool = false) throws -> PageID {
        if allocator.extendOnly {
            defer { allocator.nextPage += 1 }
            return PageID(allocator.nextPage)
        }
        if let page = allocator.recycled.popLast() { return page }
        if (allocator.prefersRuns || preferringRuns) && !allocator.lowestFirst {
            // A few entries at most are consumed looking for a run; the single pages they hold
            // go back to the free tree as leftovers, which the next transaction takes first.
            while allocator.poolRuns.isEmpty && !allocator.exhausted && allocator.entriesConsumedForRuns < 4 {
                try refillPool()
                allocator.entriesConsumedForRuns += 1
            }
            if let page = allocator.poolRuns.popLast() { return page }
            if allocator.poolSingles.count > AllocatorState.singlesKeptBeforeExtending, let page = allocator.poolSingles.popLast() {
                return page
            }
        } else {
            if allocator.poolSingles.isEmpty && allocator.poolRuns.isEmpty && !allocator.exhausted { try refillPool() }
            allocator.reusedCount += 1
            // A small commit's other pages take the single pages; a large transaction takes
            // the lowest free pages, as compaction and the file's tail want.
            if allocator.reusedCount > AllocatorState.smallCommitPageCount,
                let run = allocator.poolRuns.last, allocator.poolSingles.last.map({ run < $0 }) ?? true
            {
                return allocator.poolRuns.removeLast()
            }
            if let page = allocator.poolSingles.popLast() ?? allocator.poolRuns.popLast() { return page }
        }
        defer { allocator.nextPage += 1 }
        return PageID(allocator.nextPage)
    }

    func releasePage(_ reference: PageReference, owner: PageOwner) {
        if reference.birth == transaction {
            dirty.removeValue(forKey: reference.page)
            spilled.remove(reference.page)
            introducedPages.remove(reference.page)
            allocator.recycled.append(reference.page)
            return
        }
        switch owner {
        case .history: invalidated.append(reference)
        case .system: allocator.released.append(reference.page)
        }
    }

    /// Compaction: loads every reusable free-tree entry into the pool, so allocation hands out
    /// the lowest free pages of the whole file first.
    func loadEveryReusablePage() throws {
        var pages = allocator.pool
        while let entry = try consumeNextEntry() { pages += entry }
        allocator.pool = pages.sorted(by: >)
        allocator.lowestFirst = true
    }

    /// Adds the next reusable free-tree entry's pages to the pool.
    private func refillPool() throws {
        guard let pages = try consumeNextEntry() else { return }
        (allocator.poolSingles, allocator.poolRuns) = AllocatorState.split(allocator.pool + pages)
    }

    /// Consumes the next reusable free-tree entry: its pages, or nil (and `exhausted` set) when
    /// there is none.
    private func consumeNextEntry() throws -> [PageID]? {
        var found: ([UInt8], LeafValue)?
        let lower = allocator.consumed.last.map { KeyBound($0, inclusive: false) }
        try allocator.baseFreeTree.scan(KeyRange(lower: lower), reverse: false, reader: treeReader) { key, value in
            found = (Array(key), value)
            return false
        }
        guard let (key, value) = found, FreeTree.release(of: key) <= allocator.horizon else {
            allocator.exhausted = true
            return nil
        }
        let holder = allocator.baseFreeTree.page(of: key)
        let pages = try FreeTree.decode(value, page: holder)
        for page in pages where page.rawValue == 0 || page.rawValue >= allocator.nextPage {
            throw StoreError.malformedPage(page: holder, reason: "free tree lists \(page), outside the file")
        }
        allocator.consumed.append(key)
        allocator.consumedPageCount += UInt64(pages.count)
        return pages
    }

    /// Rewrites the free tree so it records every consumed entry as gone, every unused pool page
    /// as free, and every page released here under this transaction. Editing the free tree itself
    /// allocates and releases pages, so the edits repeat until a pass changes nothing.
    ///
    /// The edits go into the state journal (format version 4) while its free-tree records stay
    /// within `journalBudget` bytes; a pass that leaves more applies them all to the tree's pages
    /// and makes the rest of this commit's edits go straight to the pages, as before version 4.
    func settleFreeTree(journalBudget: Int) throws {
        let perEntry = FreeTree.pagesPerEntry(pageSize: pageSize)
        var deletedConsumed = 0
        for pass in 0..<64 {
            // Edits that allocate from the pages being recorded can feed back into each other;
            // after a few passes, take new pages from the end of the file only.
            if pass == 8 { allocator.extendOnly = true }
            var tree = allocator.freeTree
            // Removing entries can itself consume more entries; those are removed next pass.
            let newlyConsumed = allocator.consumed[deletedConsumed...]
            deletedConsumed = allocator.consumed.count
            for key in newlyConsumed { _ = try tree.remove(key, editor: self) }
            // Unused reusable pages go back under release 0 (always reusable), in fresh keys.
            let leftover = (allocator.pool + allocator.recycled).sorted()
            let leftoverChunks = stride(from: 0, to: leftover.count, by: perEntry).map {
                leftover[$0..<min($0 + perEntry, leftover.count)]
            }
            for (number, chunk) in leftoverChunks.enumerated() {
                _ = try tree.put(leftoverKey(number), .inline(FreeTree.encode(chunk)), editor: self)
            }
            for number in leftoverChunks.count..<max(allocator.leftoverChunkCount, leftoverChunks.count) {
                _ = try tree.remove(leftoverKey(number), editor: self)
            }
            allocator.leftoverChunkCount = leftoverChunks.count
            // Sorted in place: later passes find it almost sorted, which sorting does in O(n).
            allocator.released.sort()
            let released = allocator.released
            for (number, start) in stride(from: 0, to: released.count, by: perEntry).enumerated() {
                let chunk = released[start..<min(start + perEntry, released.count)]
                _ = try tree.put(
                    FreeTree.key(release: transaction, sequence: UInt64(number)), .inline(FreeTree.encode(chunk)),
                    editor: self)
            }
            if !tree.writesThrough, tree.journal.encodedByteCount > journalBudget {
                try tree.flush(editor: self)
                tree.writesThrough = true
            }
            allocator.freeTree = tree
            // Done when what this pass wrote is exactly the allocator's state after the pass: the
            // edits allocated, released and consumed nothing that the written entries miss.
            if deletedConsumed == allocator.consumed.count, released.count == allocator.released.count,
                leftover == (allocator.pool + allocator.recycled).sorted()
            {
                return
            }
        }
        throw StoreError.commitDidNotConverge
    }

    private func leftoverKey(_ number: Int) -> [UInt8] {
        FreeTree.key(release: .none, sequence: transaction.rawValue << 20 | UInt64(number))
    }

    /// Pages recorded in the free tree once this transaction commits.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming the base state when the free
    ///   tree gave this transaction more pages than the state says it holds (a damaged count).
    func freePageCountAfterCommit() throws -> UInt64 {
        guard allocator.consumedPageCount <= base.state.freePageCount else {
            throw StoreError.malformedPage(
                page: base.stateReference.page, reason: "the free tree holds more pages than the state records")
        }
        return base.state.freePageCount - allocator.consumedPageCount
            + UInt64(allocator.pool.count + allocator.recycled.count + allocator.released.count)
    }
}
