// Verify: walk every retained root and the engine's own trees, read and check every page, and
// account for every page of the file as reachable or free.

/// The result of ``Store/verify(progress:)``.
package struct VerificationReport: Sendable, Equatable {
    /// Pages read and checked (each counted once).
    package var pagesChecked = 0
    /// Pages reachable from the newest state (retained roots, system trees).
    package var reachablePageCount = 0
    /// Pages recorded as free (reusable now or once the commit that freed them is durable).
    package var freePageCount = 0
    /// Pages neither reachable nor free: space lost until a compaction.
    package var leakedPageCount = 0
    /// Every problem found, one line each; empty when the store is sound.
    package var problems: [String] = []
    package var isSound: Bool { problems.isEmpty }
}

extension Store {
    /// Reads and checks every page reachable from the newest state: the state record, every
    /// retained root with its lists, catalog, collection trees and large values, the history
    /// index and the free tree. Then checks that no page is both reachable and free, that no
    /// free page is listed twice, and counts pages that are neither.
    ///
    /// Cost: O(pages in the store). Runs in a read transaction; the writer is not blocked.
    /// - Parameter progress: called with (pages checked, pages in the store) now and then.
    package func verify(progress: ((Int, Int) -> Void)? = nil) throws -> VerificationReport {
        let reader = try beginRead()
        defer { reader.close() }
        // The walk reaches every retained root, whose old versions may be packed: their slots
        // are free, and a commit may be rewriting one while the walk runs. So every page is looked
        // for in the pack index before its slot, as an as-of reader does (regression:
        // `PackedSlotReuseTests`, a crash reading a branch page that changed under the walk).
        var walk = IntegrityWalk(reader: reader.historicReader, total: Int(reader.snapshot.state.pageCount), progress: progress)
        walk.run(reader.snapshot)
        return walk.report
    }
}

/// The traversal behind ``Store/verify(progress:)``; it records problems instead of stopping.
struct IntegrityWalk {
    let reader: SnapshotReader
    let total: Int
    let progress: ((Int, Int) -> Void)?
    var report = VerificationReport()
    private var reachable: Set<UInt64> = []
    private var free: Set<UInt64> = []
    /// Page versions stored in packs (their slots are not theirs any more), and those visited.
    private var packed: Set<PageReference> = []
    private var packedVisited: Set<PageReference> = []

    init(reader: SnapshotReader, total: Int, progress: ((Int, Int) -> Void)?) {
        self.reader = reader
        self.total = total
        self.progress = progress
    }

    mutating func run(_ snapshot: StoreSnapshot) {
        mark(snapshot.stateReference, kind: .state)
        walkTree(snapshot.state.historyIndex, owner: "history index")
        walkTree(snapshot.state.lineageIndex, owner: "lineage index")
        walkTree(snapshot.state.timeIndex, owner: "time index")
        walkTree(snapshot.state.snapshots, owner: "snapshot tree")
        walkPacks(snapshot.state.packs, secureDelete: snapshot.state.secureDelete)
        walkTree(snapshot.state.headTimeline, owner: "head timeline")
        walkFreeTree(snapshot.state.freeTree, journal: snapshot.state.journal.freeTree)
        var retained = 0
        let history = JournaledTree(root: snapshot.state.historyIndex, journal: snapshot.state.journal.historyIndex)
        do {
            try history.scan(.all, reverse: false, reader: reader) { key, value in
                let root = HistoryIndex.root(of: key)
                let entry = try HistoryEntry.decode(value, page: history.page(of: key))
                walkRoot(entry.rootPage, id: root)
                for (list, rootOwned) in [(entry.deadList, entry.deadListIsRootOwned), (entry.newList, entry.newListIsRootOwned)]
                where !rootOwned && !list.isInline {
                    try PageList.forEachChunk(list, reader: reader) { chunk in mark(chunk.reference, kind: .listChunk) }
                }
                retained += 1
                return true
            }
        } catch {
            problem("history index: \(error)")
        }
        checkHeadReach(snapshot)
        for reference in packed.subtracting(packedVisited).sorted(by: { $0.page < $1.page }).prefix(16) {
            problem("packed page \(reference.page.rawValue) (born in \(reference.birth.rawValue)) is reached by no retained root")
        }
        if UInt64(retained) != snapshot.state.retainedRootCount {
            problem("state records \(snapshot.state.retainedRootCount) retained roots, history index holds \(retained)")
        }
        if UInt64(free.count) != snapshot.state.freePageCount {
            problem("state records \(snapshot.state.freePageCount) free pages, free tree holds \(free.count)")
        }
        for page in reachable where free.contains(page) {
            problem("page \(page) is both reachable and recorded free")
        }
        report.reachablePageCount = reachable.count
        report.freePageCount = free.count
        report.leakedPageCount = max(0, total - 1 - reachable.union(free).count)
        progress?(report.pagesChecked, total)
    }

    private mutating func problem(_ text: String) { report.problems.append(text) }

    /// Reads and verifies a page once; returns false when it was already seen or is damaged.
    @discardableResult
    private mutating func mark(_ reference: PageReference, kind: PageKind?) -> Bool {
        // A packed version was rebuilt and checked when the pack index was walked.
        if packed.contains(reference) { return packedVisited.insert(reference).inserted }
        guard reachable.insert(reference.page.rawValue).inserted else { return false }
        do {
            _ = try reader.pageFile.read(reference, kind: kind, pageCount: reader.pageCount, cached: false)
        } catch {
            problem("\(error)")
            return false
        }
        report.pagesChecked += 1
        if report.pagesChecked % 4096 == 0 { progress?(report.pagesChecked, total) }
        return true
    }

    private mutating func walkTree(_ root: PageReference, owner: String) {
        guard !root.isNone else { return }
        do {
            var pages: [(PageReference, PageKind)] = []
            // By reference: a packed version of page p and the page now in slot p may share a tree.
            var inThisTree: Set<PageReference> = []
            try walkNodes(root, .all, depth: 0, &inThisTree, into: &pages)
            for (page, kind) in pages where kind == .overflowData || kind == .overflowIndex { mark(page, kind: kind) }
        } catch {
            problem("\(owner): \(error)")
        }
    }

    /// Visits nodes top-down, checking each against the separators above it. A subtree already
    /// seen through another root is shared (copy-on-write) and not walked again; a page reached
    /// twice within one tree is a cycle or a shared child, which no valid tree has.
    private mutating func walkNodes(
        _ reference: PageReference, _ interval: KeyInterval, depth: Int, _ inThisTree: inout Set<PageReference>,
        into overflow: inout [(PageReference, PageKind)]
    ) throws {
        guard inThisTree.insert(reference).inserted else {
            throw StoreError.malformedPage(page: reference.page, reason: "page is reached twice in one tree (a cycle or a shared child)")
        }
        try KeyInterval.checkDepth(depth, page: reference.page)
        let alreadySeen = packed.contains(reference) ? packedVisited.contains(reference) : reachable.contains(reference.page.rawValue)
        // A damaged page is recorded as a problem by mark; the walk goes on with its siblings.
        guard alreadySeen || mark(reference, kind: nil) else { return }
        let node = try reader.node(reference)
        try interval.check(node, page: reference.page)
        guard !alreadySeen else { return }
        switch node {
        case .branchPage(let view):
            for index in 0...view.keyCount {
                try walkNodes(view.child(at: index), interval.child(index, of: view), depth: depth + 1, &inThisTree, into: &overflow)
            }
        case .leafPage(let view):
            for index in 0..<view.count {
                guard case .overflow(let value) = view.value(at: index) else { continue }
                try Overflow.forEachIndexPage(value, reader: reader) { index, data in
                    overflow.append((index, .overflowIndex))
                    for page in data { overflow.append((PageReference(page: page, birth: value.index.birth), .overflowData)) }
                }
            }
        case .leaf, .branch:
            break
        }
    }

    private mutating func walkRoot(_ page: PageReference, id: TransactionID) {
        guard page.birth == id else { return problem("history index entry \(id.rawValue) points at a page born in \(page.birth)") }
        do {
            let root = try LoadedRoot(page, reader: reader)
            for meta in try root.metadataPages(reader: reader) { mark(meta, kind: nil) }
            _ = try root.invalidatedPages(reader: reader)
            _ = try root.introducedPages(reader: reader)
            walkTree(root.record.catalog, owner: "catalog of root \(id.rawValue)")
            for collection in try collectionRoots(root.record.catalog) { walkTree(collection, owner: "collection of root \(id.rawValue)") }
        } catch {
            problem("root \(id.rawValue): \(error)")
        }
    }

    /// A state that says its head reaches no packed version has its head read slot first (a
    /// packed version's slot is free and may be rewritten under the read): checks that the
    /// head's trees reach none. A head behind the pack cursor is read pack first whatever the
    /// state says. O(head pages), set lookups only: the pages were read by the walk.
    private mutating func checkHeadReach(_ snapshot: StoreSnapshot) {
        guard snapshot.state.headMayReachPackedVersions == false, !packed.isEmpty,
            snapshot.head.transaction >= snapshot.state.packs.cursor
        else { return }
        do {
            let trees = [snapshot.head.catalog] + (try collectionRoots(snapshot.head.catalog))
            var found: PageReference?
            for tree in trees where !tree.isNone && found == nil {
                try TreePages.forEach(in: tree, reader: reader) { page, _ in
                    if found == nil, packed.contains(page) { found = page }
                }
            }
            if let found {
                problem(
                    "the state says the head reaches no packed version, but it reaches page \(found.page.rawValue) "
                        + "(born in \(found.birth.rawValue)), which is packed")
            }
        } catch {
            problem("head: \(error)")
        }
    }

    /// The root pages of the collection trees a catalog names.
    private func collectionRoots(_ catalogRoot: PageReference) throws -> [PageReference] {
        let catalog = BTree(root: catalogRoot, owner: .history)
        var roots: [PageReference] = []
        try catalog.scan(.all, reverse: false, reader: reader) { _, value in
            roots.append(try CollectionEntry.decode(value, page: catalog.root.page).root)
            return true
        }
        return roots
    }

    private mutating func walkFreeTree(_ root: PageReference, journal: TreeJournal) {
        walkTree(root, owner: "free tree")
        let tree = JournaledTree(root: root, journal: journal)
        do {
            try tree.scan(.all, reverse: false, reader: reader) { key, value in
                for page in try FreeTree.decode(value, page: tree.page(of: key)) {
                    if !free.insert(page.rawValue).inserted { problem("page \(page.rawValue) is listed free twice") }
                    if page.rawValue == 0 || page.rawValue >= UInt64(total) {
                        problem("free tree lists page \(page.rawValue), outside the file")
                    }
                }
                return true
            }
        } catch {
            problem("free tree: \(error)")
        }
    }

    // MARK: - Packed history

    /// Walks the pack index: its pages, every pack page its directory names (checked, and its
    /// entry count compared), and every packed page, rebuilt and checked. Named entries (format
    /// version 5) must name what the index says they hold and, under secure delete, every one
    /// must be live: a dead one would keep freed bytes.
    private mutating func walkPacks(_ counters: PackCounters, secureDelete: Bool) {
        guard !counters.index.isNone, let packs = reader.packs else { return }
        walkTree(counters.index, owner: "pack index")
        var directory: [PageID: (birth: TransactionID, entries: UInt64)] = [:]
        var entriesPerPage: [PageID: UInt64] = [:]
        var references: [PageReference] = []
        var locations: [PageReference: (packPage: PageID, offset: Int)] = [:]
        let tree = BTree(root: counters.index, owner: .system)
        do {
            try tree.scan(.all, reverse: false, reader: reader) { key, value in
                let owner = PackIndex.reference(of: key, order: counters.keyOrder)
                switch try PackIndex.decode(value, page: tree.root.page, owner: owner?.birth ?? .none) {
                case .packed(let packPage, let offset):
                    guard let reference = owner else {
                        throw StoreError.malformedPage(page: tree.root.page, reason: "pack index key is malformed")
                    }
                    // Head readers look only versions born at or before the cursor up in the
                    // pack first (FileFormat.md, "Head reaching packed versions").
                    if reference.birth > counters.cursor {
                        problem("packed page \(reference.page.rawValue) (born in \(reference.birth.rawValue)) is born after the pack cursor \(counters.cursor.rawValue)")
                    }
                    references.append(reference)
                    locations[reference] = (packPage.page, offset)
                    entriesPerPage[packPage.page, default: 0] += 1
                case .run:
                    break
                case .directory(let birth, let entries, _):
                    guard let packPage = PackIndex.packPage(ofDirectoryKey: key) else {
                        throw StoreError.malformedPage(page: tree.root.page, reason: "pack directory key is malformed")
                    }
                    directory[packPage] = (birth, entries)
                }
                return true
            }
        } catch {
            return problem("pack index: \(error)")
        }
        for (packPage, (birth, entries)) in directory.sorted(by: { $0.key < $1.key }) {
            do {
                let page = try packs.packPageBuffer(PageReference(page: packPage, birth: birth))
                if reachable.insert(packPage.rawValue).inserted { report.pagesChecked += 1 }
                if counters.namesEntries {
                    var live: UInt64 = 0
                    for found in try PackPage.namedEntries(of: page, packPage: packPage) {
                        if let location = locations[found.page], location.packPage == packPage, location.offset == found.offset {
                            live += 1
                        } else if secureDelete {
                            problem("pack page \(packPage.rawValue) keeps a freed entry of page \(found.page.page.rawValue) (born in \(found.page.birth.rawValue)) under secure delete")
                        }
                    }
                    if live != entries {
                        problem("pack page \(packPage.rawValue) holds \(live) entries the index points at, its directory records \(entries)")
                    }
                }
            } catch {
                problem("pack page \(packPage.rawValue): \(error)")
            }
            if entriesPerPage[packPage] != entries {
                problem("pack directory records \(entries) entries in pack page \(packPage.rawValue), the index \(entriesPerPage[packPage] ?? 0)")
            }
        }
        for packPage in entriesPerPage.keys where directory[packPage] == nil {
            problem("pack index names pack page \(packPage.rawValue), which the directory lacks")
        }
        if UInt64(references.count) != counters.packedPages {
            problem("state records \(counters.packedPages) packed pages, the pack index holds \(references.count)")
        }
        if UInt64(directory.count) != counters.packPages {
            problem("state records \(counters.packPages) pack pages, the pack directory holds \(directory.count)")
        }
        for reference in references {
            packed.insert(reference)
            do {
                guard try packs.rebuiltFromPack(reference) != nil else { throw StoreError.malformedPage(page: reference.page, reason: "not in the pack index") }
                report.pagesChecked += 1
            } catch {
                problem("packed page \(reference.page.rawValue) (born in \(reference.birth.rawValue)): \(error)")
            }
        }
    }
}
