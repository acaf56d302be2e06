// Commit: fold edits into a new root (or move the head), prune, settle free space, write, sync.

/// What a write transaction changes besides collection contents.
/// How a root copied from another store's history fits into this one.
struct ImportedRoot {
    var historyParent: TransactionID
    var lineageParent: TransactionID
    var depth: UInt64
    var timeMilliseconds: Int64
    /// Its dead list (pages of its lineage parent it no longer reaches), as pages of this store.
    var invalidated: [PageReference]
    /// For a revert, the root (in this store) whose contents it took.
    var contentSource: TransactionID = .none
}

struct PendingHistoryChange {
    /// Move the head to this existing root instead of committing a new one (undo, redo).
    var headMove: TransactionID?
    /// Redo targets to set, as (root, target) pairs, with a head move.
    var redoTargets: [(TransactionID, TransactionID)] = []
    /// The head move passes a root whose history parent is not its lineage parent (an undo or
    /// redo across a revert or a restore, or a restore with history): the new head may reach
    /// versions packed on another line (see ``StateRecord/headMayReachPackedVersions``).
    var headMoveLeavesLineage = false
    /// The root a revert copied its trees from: the new root's lineage parent.
    var contentSource: TransactionID?
    /// Commit a new root even though no page changed (a revert to identical contents).
    var forceRoot = false
    var retention: RetentionPolicy?
    var dropsUndoneBranches: Bool?
    var pruneMode: PruneMode?
    /// A state must be written even though nothing else changed (retention, prune, clear).
    var forceState = false
    /// Snapshots to add (with their record) or remove (nil), by name.
    var snapshotEdits: [([UInt8], SnapshotInfo?)] = []
    /// The new root shares no pages with older roots (a restore): it has no lineage parent.
    var freshLineage = false
    /// The new root has the head's contents on other pages (compaction): it takes the head's
    /// place in history, and the head is dropped, unless something pins it.
    var replacesHead = false
    /// Compaction: engine-tree pages at or beyond this page number are rewritten lower.
    var relocationThreshold: UInt64?
    /// A root copied from another store's history (a backup with history).
    var importedRoot: ImportedRoot?
    /// Roots to drop outright, whatever retention says (the empty root a backup starts with).
    var dropRoots: [TransactionID] = []
    /// A packing commit: it packs the batch due at the head and changes nothing else (see
    /// ``HistoryPacking/inBackground``).
    var packsOnly = false

    var isEmpty: Bool {
        headMove == nil && contentSource == nil && !forceRoot && retention == nil && dropsUndoneBranches == nil
            && pruneMode == nil && !forceState && snapshotEdits.isEmpty && dropRoots.isEmpty && !packsOnly
    }
}

extension WriteTransaction {
    var hasChanges: Bool { !dirty.isEmpty || !invalidated.isEmpty || !collections.isEmpty || !history.isEmpty }
    /// Whether this transaction commits a new root: it changed user-visible trees (or is a revert
    /// or restore). Decided before commit-time edits of the engine's own trees add dirty pages.
    var makesRoot: Bool {
        history.headMove == nil
            && (!introducedPages.isEmpty || !invalidated.isEmpty || !collections.isEmpty || history.forceRoot
                || history.contentSource != nil)
    }

    /// Makes every edit of this transaction durable (in durable mode) and visible, as one new root.
    ///
    /// Steps:
    /// 1. fold the edited collections into the catalog tree and lay out the new root page with its
    ///    deadlist and introduced list (or, for undo and redo, pick the existing root to move to);
    /// 2. record the root in the history indexes and update redo targets;
    /// 3. drop an undone branch (when the store is set to) and prune what retention lets go;
    /// 4. settle the free tree;
    /// 5. build the state record;
    /// 6. hand the sealed pages to the store, which writes them, writes a header slot and syncs once.
    ///
    /// - Returns: the new head's root id, or nil when the transaction changed nothing.
    /// - Throws: ``StoreError/writesDisabledAfterSyncFailure(underlying:)`` when the sync fails
    ///   (the store then refuses writes until reopened), or an I/O or damage error; on any error
    ///   the store is unchanged.
    @discardableResult
    package func commit() throws -> TransactionID? {
        guard let ticket = try writeCommit() else { return nil }
        try store.awaitDurable(ticket)
        return ticket.head
    }

    /// Builds the commit and writes it, without waiting for the sync that makes it durable:
    /// ``Store/awaitDurable(_:)`` does that. A durable commit releases the writer to the next
    /// writer of this process here, which builds on it while this one waits, so that several
    /// commits share one sync (see `GroupCommit`). A deferred-mode commit is published here.
    /// - Returns: the ticket to wait on, or nil when the transaction changed nothing.
    /// - Throws: as ``commit()``; on an error the store is unchanged.
    package func writeCommit() throws -> CommitTicket? {
        if isPoisoned {
            abort()
            throw StoreError.transactionFailed
        }
        try checkActive()
        guard hasChanges else {
            abort()
            return nil
        }
        let sealed: (pages: [PageBuffer], snapshot: StoreSnapshot)
        let syncs = store.nextCommitSyncs
        do {
            sealed = try buildCommit(syncs: syncs)
        } catch {
            store.groupCommit.cancelNaming()
            abort()
            throw error
        }
        markFinished()
        releaseDecodedPages()
        let head = sealed.snapshot.head.transaction
        // Secure delete zeroes freed pages right after its commit's own sync, so its commits are
        // published one by one rather than in groups.
        if store.options.durability == .durable && !sealed.snapshot.state.secureDelete {
            // Remembered before the writer is released to the next commit (forgotten if it fails).
            rememberPruning()
            return try store.writeGroupMember(self, pages: sealed.pages, snapshot: sealed.snapshot)
        }
        // Publishing releases the writer whether it succeeds or throws.
        try store.publishCommit(self, pages: sealed.pages, snapshot: sealed.snapshot, syncs: syncs)
        rememberPruning()
        return CommitTicket(number: 0, head: head)
    }

    /// Whether ``writeCommit()`` only writes (a durable commit joining a group, whose sync
    /// ``Store/awaitDurable(_:)`` waits for, or a deferred-mode commit that is no checkpoint),
    /// rather than also syncing as checkpoints and secure delete do. The base state's secure
    /// delete flag is the sealed one's: it is set at creation and every state copies its base's.
    package var commitWaitsForNoSync: Bool {
        store.options.durability == .durable ? !base.state.secureDelete : !store.nextCommitSyncs
    }

    private func rememberPruning() {
        if let published = publishedSnapshotRoots {
            store.pruningMemory.remember(snapshotCounts: published.counts, for: published.tree, leftBehind: rootsLeftBehind)
        }
    }

    private func buildCommit(syncs: Bool) throws -> (pages: [PageBuffer], snapshot: StoreSnapshot) {
        let makesRoot = self.makesRoot
        // The new head is never pruned or dropped, even when it lies in an undone branch (a revert
        // to a root there).
        if makesRoot { allocator.pinnedRoots.roots.insert(transaction) }
        var trees = HistoryTrees(state: base.state)
        guard var baseHead = try trees.entry(base.head.transaction, reader: self) else {
            throw StoreError.malformedPage(page: base.state.historyIndex.page, reason: "history index lacks the head root")
        }
        let revertStaysOnLine = try history.contentSource.map { try isPackedLineAncestor($0, of: baseHead, trees: trees) } ?? false
        // The commit's own pages go where the next commits' will: in runs (see `AllocatorState`).
        // Compaction keeps taking the lowest pages, to empty the file's tail.
        allocator.prefersRuns = history.relocationThreshold == nil
        let statePage = PageReference(page: try takeFreePage(), birth: transaction)
        releasePage(base.stateReference, owner: .system)
        // Snapshots first: retention and branch dropping never touch their roots.
        var snapshots = try applySnapshotEdits()
        let retention = history.retention ?? base.state.retention
        let dropsUndone = history.dropsUndoneBranches ?? base.state.dropsUndoneBranches
        var retainedDelta = 0
        let head: HistoryEntry
        let headRecord: RootRecord
        if makesRoot {
            // 1–2. The new root and its history entries.
            // Compaction replaces the head only when nothing pins it and no root was committed
            // on it (a revert or restore names its history parent, whatever the lineage says).
            let replacing = history.replacesHead && !allocator.pinnedRoots.contains(baseHead.root)
                && baseHead.redoTarget == .none
            let (record, built) = try buildRoot(baseHead: baseHead, replacing: replacing, trees: trees)
            var entry = built
            let branches = !history.replacesHead && history.importedRoot == nil
            let undoneBranch = branches ? baseHead.redoTarget : TransactionID.none
            if history.importedRoot != nil {
                try trees.insert(entry, editor: self)
            } else if history.replacesHead && !replacing {
                // The compacted copy becomes a child of the head it could not replace, and keeps
                // the head's redo target: no branch is made and none is dropped.
                entry.redoTarget = baseHead.redoTarget
                baseHead.redoTarget = transaction
                try trees.setEntry(baseHead, editor: self)
                try trees.insert(entry, editor: self)
            } else if replacing {
                entry.redoTarget = baseHead.redoTarget
                if var parent = try trees.entry(baseHead.historyParent, reader: self), parent.redoTarget == baseHead.root {
                    parent.redoTarget = transaction
                    try trees.setEntry(parent, editor: self)
                }
                try trees.insert(entry, editor: self)
                if try pruneRoot(baseHead, &trees) { retainedDelta -= 1 }
            } else {
                baseHead.redoTarget = transaction
                try trees.setEntry(baseHead, editor: self)
                try trees.insert(entry, editor: self)
            }
            retainedDelta += 1
            head = entry
            headRecord = record
            // A commit stamped by the clock: no earlier root can have been committed later.
            if history.importedRoot == nil && !replacing { try trees.lowerTimes(above: entry.timeMilliseconds, editor: self) }
            // 3. An undone branch is dropped at once when the store is set to, and always under
            // `lastRoots`, which keeps no side branch (see `RetentionRule`).
            let dropsBranch: Bool
            if case .lastRoots = retention { dropsBranch = true } else { dropsBranch = dropsUndone }
            if dropsBranch, undoneBranch != .none, undoneBranch != transaction {
                retainedDelta -= try dropBranch(from: undoneBranch, &trees)
            }
        } else {
            let target = history.headMove ?? base.head.transaction
            for (root, redoTarget) in history.redoTargets {
                guard var entry = try trees.entry(root, reader: self) else { throw StoreError.rootNotRetained(root) }
                entry.redoTarget = redoTarget
                try trees.setEntry(entry, editor: self)
            }
            guard let entry = try trees.entry(target, reader: self) else { throw StoreError.rootNotRetained(target) }
            head = entry
            headRecord = try LoadedRoot(entry.rootPage, reader: self).record
        }
        for root in history.dropRoots {
            guard let entry = try trees.entry(root, reader: self) else { continue }
            if try pruneRoot(entry, &trees) { retainedDelta -= 1 }
        }
        // 3. Retention.
        let mode = history.pruneMode ?? (makesRoot ? .automatic(limit: store.options.pruneBatchLimit) : PruneMode.none)
        let (prunedCount, cursor) = try pruneHistory(&trees, head: head, policy: retention, mode: mode)
        retainedDelta -= prunedCount
        self.prunedCount = prunedCount
        // Packed history: old versions of the head's lineage become deltas, here or in a packing
        // commit right after this one. A store that retains no more roots than the window has
        // nothing to pack (the walk only moves its depth hint, at no cost here): no packing
        // commit for that.
        if (makesRoot || history.packsOnly) && history.relocationThreshold == nil {
            let retained = Int64(base.state.retainedRootCount) + Int64(retainedDelta)
            if history.packsOnly || !packsInPackingCommits || retained <= Int64(packing.window) {
                try packHistory(&trees, head: head)
            } else {
                leavesPackingDue = packingIsDue(head: head)
            }
        }
        try finishPacking()
        var timeline = try updateHeadTimeline(trees, head: head, policy: retention)
        // The history trees' edits ride in the state page while they fit (format version 4),
        // and are written to their pages at once when they do not; a quarter of the room is kept
        // for the free tree's, which settle last.
        let journalCapacity = store.formatVersion >= 4 ? StateJournal.writeOutThreshold(pageSize: pageSize) : 0
        if trees.journalByteCount + timeline.tree.journal.encodedByteCount > journalCapacity - journalCapacity / 4 {
            try trees.flushJournals(editor: self)
            try timeline.tree.flush(editor: self)
        }
        if let threshold = history.relocationThreshold {
            var relocator = Relocator(threshold: threshold, total: 0, collections: nil, progress: { _ in })
            func relocate(_ root: PageReference) throws -> PageReference {
                try relocator.relocate(root, owner: .system, catalog: false, in: self)
            }
            trees.entries.pagesMoved(to: try relocate(trees.entries.root))
            trees.lineage.pagesMoved(to: try relocate(trees.lineage.root))
            trees.times.pagesMoved(to: try relocate(trees.times.root))
            snapshots.root = try relocate(snapshots.root)
            packWork.tree.root = try relocate(packWork.tree.root)
            packWork.counters.index = packWork.tree.root
            timeline.tree.pagesMoved(to: try relocate(timeline.tree.root))
        }
        publishedSnapshotRoots = (snapshots.root, allocator.pinnedRoots.snapshots)
        // 4. Free space.
        try settleFreeTree(
            journalBudget: journalCapacity - trees.journalByteCount - timeline.tree.journal.encodedByteCount)
        // 5. The state record.
        let retainedRootCount = Int64(base.state.retainedRootCount) + Int64(retainedDelta)
        guard retainedRootCount >= 0 else {
            throw StoreError.malformedPage(
                page: base.stateReference.page, reason: "the history index holds more roots than the state records")
        }
        var state = StateRecord(
            transaction: transaction, previous: base.stateReference,
            syncedTransaction: store.syncedTransactionForCommit(base: base.transaction, syncs: syncs),
            head: head.rootPage, historyIndex: trees.entries.root, freeTree: allocator.freeTree.root,
            pageCount: allocator.nextPage, tail: try oldestRoot(in: trees),
            retainedRootCount: UInt64(retainedRootCount), freePageCount: try freePageCountAfterCommit())
        state.lineageIndex = trees.lineage.root
        state.timeIndex = trees.times.root
        state.retention = retention
        state.dropsUndoneBranches = dropsUndone
        state.secureDelete = base.state.secureDelete
        state.zeroedThrough = max(base.state.zeroedThrough, store.lock.withLock { store.zeroedThrough })
        state.pruneCursor = cursor
        state.snapshots = snapshots.root
        state.packs = packWork.counters
        state.headMayReachPackedVersions = headMayReachPackedVersions(
            baseHead: baseHead, makesRoot: makesRoot, revertStaysOnLine: revertStaysOnLine)
        state.headTimeline = timeline.tree.root
        state.headTimelineCount = timeline.count
        trees.record(into: &state.journal)
        state.journal.headTimeline = timeline.tree.journal
        state.journal.freeTree = allocator.freeTree.journal
        try state.journal.check(pageSize: pageSize) { tree in
            switch tree {
            case .historyIndex: trees.entries.root.page
            case .lineageIndex: trees.lineage.root.page
            case .timeIndex: trees.times.root.page
            case .headTimeline: timeline.tree.root.page
            case .freeTree: allocator.freeTree.root.page
            }
        }
        let stateBuffer = PageBuffer(pageSize: pageSize)
        state.encode(into: stateBuffer.bytes)
        setDirty(statePage.page, .raw(stateBuffer, kind: .state, count: 0))
        // 6. Seal every page.
        return (sealAll(), StoreSnapshot(stateReference: statePage, state: state, head: headRecord))
    }

    /// Whether the new state's head may reach packed versions, whose slots are free and may be
    /// rewritten by any commit (Docs/Robustness.md, "Reading a slot a commit may rewrite").
    ///
    /// Packing packs only versions that lineage ancestors of the head killed, and such a version
    /// is never reachable from their lineage descendants. So while every packed root is a lineage
    /// ancestor of the head, the head reaches no packed version, and its readers read slots first.
    /// Three moves break that, when the store has packed history: a revert (or a root copied from
    /// another store's history), except one to a root at or above the pack cursor on the head's
    /// own lineage (`revertStaysOnLine`: the packed roots lie below it on that line); a commit on
    /// a head behind the pack cursor (its new line does not pass the roots packed above it); and a
    /// head move across a root whose history parent is not its lineage parent. Once set, the flag
    /// stays until the store has no packed version left; a base state that does not say counts
    /// as set (``StateRecord/headReadsOldVersionsFromPacks``).
    private func headMayReachPackedVersions(baseHead: HistoryEntry, makesRoot: Bool, revertStaysOnLine: Bool) -> Bool {
        guard !packWork.counters.index.isNone, !base.state.packs.index.isNone else { return false }
        if base.state.headReadsOldVersionsFromPacks { return true }
        if makesRoot {
            if history.contentSource != nil { return !revertStaysOnLine }
            return history.importedRoot != nil || baseHead.root < base.state.packs.cursor
        }
        return history.headMoveLeavesLineage
    }

    /// Whether `root` is at or above the pack cursor and is `head` or one of its lineage
    /// ancestors: then every packed root (a lineage ancestor of the head below the cursor, while
    /// the head reaches no packed version) is one of `root`'s too. O(roots between them) lookups.
    private func isPackedLineAncestor(_ root: TransactionID, of head: HistoryEntry, trees: HistoryTrees) throws -> Bool {
        guard root >= base.state.packs.cursor else { return false }
        var entry: HistoryEntry? = head
        while let current = entry, current.root >= root {
            if current.root == root { return true }
            entry = current.lineageParent == .none ? nil : try trees.entry(current.lineageParent, reader: self)
        }
        return false
    }

    /// Folds collection edits into the catalog and lays out the new root page.
    /// - Parameter replacing: whether this root takes the base head's place (compaction).
    private func buildRoot(baseHead: HistoryEntry, replacing isReplacing: Bool, trees: HistoryTrees) throws -> (RootRecord, HistoryEntry) {
        let replacing = isReplacing ? baseHead : nil
        for name in collections.names.sorted(by: { KeyOrder.compare($0, $1) < 0 }) {
            let state = collections[name]!
            if state.exists {
                let entry = CollectionEntry(root: state.tree.root, count: state.count)
                _ = try catalogTree.put(name, .inline(entry.encoded()), editor: self)
            } else {
                _ = try catalogTree.remove(name, editor: self)
            }
        }
        let rootPage = PageReference(page: try takeFreePage(), birth: transaction)
        var parentPage = base.state.head
        if let replacing {
            parentPage = try trees.entry(replacing.historyParent, reader: self)?.rootPage ?? .none
        }
        var record = RootRecord(
            transaction: transaction, parent: parentPage,
            timeMilliseconds: store.options.clock.nowMilliseconds(), catalog: catalogTree.root,
            label: label)
        record.contentSource = history.contentSource ?? .none
        if let imported = history.importedRoot {
            record.timeMilliseconds = imported.timeMilliseconds
            record.contentSource = imported.contentSource
        }
        if let replacing {
            // Same contents as the head it replaces: keep its label and recorded time, so history
            // and reads by time answer as before.
            let replaced = try LoadedRoot(replacing.rootPage, reader: self).record
            record.label = replaced.label
            record.timeMilliseconds = replacing.timeMilliseconds
        }
        let buffer = try buildRootPage(record, on: rootPage.page)
        let decoded = try RootRecord.decode(buffer)
        var entry = HistoryEntry(
            rootPage: rootPage, historyParent: replacing.map(\.historyParent) ?? base.head.transaction,
            lineageParent: history.freshLineage ? .none : (history.contentSource ?? base.head.transaction),
            redoTarget: .none, depth: replacing.map(\.depth) ?? baseHead.depth + 1,
            timeMilliseconds: decoded.timeMilliseconds, deadList: decoded.invalidated, newList: decoded.introduced,
            deadListIsRootOwned: true, newListIsRootOwned: true)
        if let imported = history.importedRoot {
            entry.historyParent = imported.historyParent
            entry.lineageParent = imported.lineageParent
            entry.depth = imported.depth
        }
        return (decoded, entry)
    }

    private func oldestRoot(in trees: HistoryTrees) throws -> TransactionID {
        var oldest = TransactionID.none
        try trees.entries.scan(.all, reverse: false, reader: self) { key, _ in
            oldest = HistoryIndex.root(of: key)
            return false
        }
        return oldest
    }

    /// Lays out the root page: fixed fields, label, and each list inline when it fits.
    private func buildRootPage(_ record: RootRecord, on page: PageID) throws -> PageBuffer {
        var record = record
        let labelCount = record.labelBytes.count
        if labelCount > RootRecord.maximumLabelByteCount {
            throw StoreError.labelTooLong(byteCount: labelCount, limit: RootRecord.maximumLabelByteCount)
        }
        let deadlist = history.importedRoot?.invalidated ?? invalidated
        let introduced = introducedPages.sorted().map { PageReference(page: $0, birth: transaction) }
        let space = pageSize - record.inlineAreaOffset
        let entry = PageReference.byteCount
        let deadlistInline = deadlist.count * entry <= space
        let introducedInline = introduced.count * entry <= space - (deadlistInline ? deadlist.count * entry : 0)
        let buffer = PageBuffer(pageSize: pageSize)
        var inlineOffset = record.inlineAreaOffset
        record.invalidated = try placeList(deadlist, inline: deadlistInline, in: buffer, at: &inlineOffset)
        record.introduced = try placeList(introduced, inline: introducedInline, in: buffer, at: &inlineOffset)
        record.encode(into: buffer.bytes)
        setDirty(page, .raw(buffer, kind: .root, count: 0))
        return buffer
    }

    private func placeList(
        _ entries: [PageReference], inline: Bool, in owner: PageBuffer, at offset: inout Int
    ) throws -> ListDescriptor {
        if inline {
            PageList.storeInline(entries, into: owner.bytes, at: offset)
            offset += entries.count * PageReference.byteCount
            return ListDescriptor(count: entries.count, firstChunk: .none)
        }
        var pages: [PageID] = []
        for _ in 0..<PageList.chunkCount(for: entries.count, pageSize: pageSize) { pages.append(try takeFreePage()) }
        let (descriptor, chunks) = PageList.makeChunks(entries, on: pages, birth: transaction, pageSize: pageSize)
        for (page, buffer, count) in chunks { setDirty(page, .raw(buffer, kind: .listChunk, count: count)) }
        return descriptor
    }

    /// Encodes and seals every dirty page with this transaction as its birth.
    private func sealAll() -> [PageBuffer] {
        dirty.map { page, content in seal(page, content) }
    }

    /// Encodes and seals one page with this transaction as its birth.
    func seal(_ page: PageID, _ content: DirtyPage) -> PageBuffer {
        switch content {
        case .leaf(let node):
            let buffer = PageBuffer(pageSize: pageSize)
            NodeLayout.encode(node, into: buffer)
            buffer.seal(kind: .leaf, page: page, birth: transaction, count: node.keys.count)
            return buffer
        case .branch(let node):
            let buffer = PageBuffer(pageSize: pageSize)
            NodeLayout.encode(node, into: buffer)
            buffer.seal(kind: .branch, page: page, birth: transaction, count: node.keys.count)
            return buffer
        case .raw(let buffer, let kind, let count):
            buffer.seal(kind: kind, page: page, birth: transaction, count: count)
            return buffer
        }
    }
}
