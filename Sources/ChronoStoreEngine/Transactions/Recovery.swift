// Opening: read the header, choose the newest slot whose state verifies, fall back otherwise.

/// Crash recovery. Cost: O(pages written by the newest transaction) when the newest slot is not
/// marked verified, O(1) when it is.
enum Recovery {
    struct Outcome {
        var snapshot: StoreSnapshot
        var slots: SlotBook
        /// Whether the chosen state was verified page by page (it was not marked verified).
        var checkedPages: Bool
        /// Whether the chosen slot's writer synced it before releasing the writer lock.
        var chosenSlotIsDurable: Bool
        /// The pages checked for an unverified state: before that state is marked durable they
        /// are written again, since after a failed sync the OS cache may hold pages the disk
        /// never got (Linux marks them clean), and a sync alone would not write them.
        var checkedPageList: [PageReference] = []
    }

    static let headerPrefixByteCount = HeaderSlot.offsets[1] + HeaderSlot.byteCount

    /// The valid header slots.
    static func readHeaderSlots(_ pageFile: PageFile) throws -> [(index: Int, slot: HeaderSlot)] {
        // Read into the stack (every write transaction reads the header): an array took the
        // runtime's type lookup (see `Array(byteCount:fill:)`).
        try withUnsafeTemporaryAllocation(byteCount: headerPrefixByteCount, alignment: 8) { raw in
            let complete: Bool
            do { complete = try pageFile.file.readFully(into: raw, at: 0) } catch let error as IOError { throw StoreError.io(error) }
            guard complete else { return [] }
            var slots: [(index: Int, slot: HeaderSlot)] = []
            for (index, offset) in HeaderSlot.offsets.enumerated() {
                if let slot = HeaderSlot.decode(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + HeaderSlot.byteCount)])) {
                    slots.append((index, slot))
                }
            }
            return slots
        }
    }

    /// Recovery without the writer lock, while another process may be committing: nothing pins
    /// the states it reads, so a state the header named when it was read can be freed and its
    /// pages reused before the checks read them. That takes at least one newer header slot, or
    /// the sync of the newest slot (skipped while its sync may be unfinished) having finished, so
    /// a failure after either is retried. The synced sequence comes from this name's lock file;
    /// a writer through another name of the same file (a hard link) reports its syncs in its own
    /// lock file, so a failure is also retried once the header changes within `patience` (that
    /// writer's next slot); a failure with a header that stays as it was stands.
    static func recoverWhileOthersWrite(
        _ pageFile: PageFile, path: String, patience: Duration = .seconds(2), syncedSequence: () -> UInt64
    ) throws -> Outcome {
        while true {
            let headerBefore = try readHeaderSlots(pageFile).map(\.slot)
            let syncedBefore = syncedSequence()
            do {
                return try recover(pageFile, path: path, syncedSequence: syncedBefore, holdsWriter: false)
            } catch let error as StoreError {
                // Retry while the writer moves on: a newer slot, or the newest slot's sync having
                // finished (it was skipped as possibly unfinished, and the older state it built on
                // may be reused as soon as it is synced).
                let clock = ContinuousClock()
                let deadline = clock.now.advanced(by: patience)
                while try readHeaderSlots(pageFile).map(\.slot) == headerBefore, syncedSequence() <= syncedBefore {
                    guard clock.now < deadline else { throw error }
                    Platform.pause(microseconds: 1_000)
                }
                pageFile.forgetByteCount()
            }
        }
    }

    /// The slots without the newest one when that one may belong to a commit still syncing
    /// (flagged "sync pending" and not known synced). Only the newest slot can be in flight: a
    /// writer always builds on the state the other slot names. A lone valid slot is kept: the
    /// other one is being rewritten (read torn), so the writer took this one as its base.
    static func withoutUnfinishedNewest(
        _ header: [(index: Int, slot: HeaderSlot)], syncedSequence: UInt64
    ) -> [(index: Int, slot: HeaderSlot)] {
        guard header.count > 1, let newest = header.max(by: { $0.slot.sequence < $1.slot.sequence }),
            !newest.slot.isSynced(upTo: syncedSequence)
        else { return header }
        return header.filter { $0.index != newest.index }
    }

    /// Reads a state record and its head root.
    static func loadSnapshot(_ state: PageReference, reader: SnapshotReader) throws -> StoreSnapshot {
        let statePage = try reader.pageFile.read(state, kind: .state, pageCount: reader.pageCount, cached: false)
        let record = try StateRecord.decode(statePage)
        // After an undo past the packing window the head's root page may be packed.
        let headReader = SnapshotReader(pageFile: reader.pageFile, pageCount: record.pageCount, packs: record.packs)
        let headPage = try headReader.read(record.head, kind: .root, cached: false)
        return StoreSnapshot(stateReference: state, state: record, head: try RootRecord.decode(headPage))
    }

    /// Chooses the state to open: the newest slot that verifies, else the other one.
    /// - Throws: ``StoreError/truncatedStore(path:byteCount:expectedAtLeast:)`` when the file is
    ///   shorter than a verified state needs, ``StoreError/noValidHeaderSlot(path:)`` when neither
    ///   slot leads to a state that verifies.
    /// - Parameters:
    ///   - syncedSequence: slots up to this sequence are known synced (from the lock file).
    ///   - holdsWriter: false when another process may hold the writer lock: then a slot whose
    ///     sync is not known to have finished belongs to a commit that may yet fail, and is skipped.
    static func recover(_ pageFile: PageFile, path: String, syncedSequence: UInt64 = 0, holdsWriter: Bool = true) throws -> Outcome {
        var header = try readHeaderSlots(pageFile)
        if !holdsWriter { header = withoutUnfinishedNewest(header, syncedSequence: syncedSequence) }
        let byteCount: UInt64
        do { byteCount = try pageFile.file.byteCount() } catch let error as IOError { throw StoreError.io(error) }
        let highest = header.map(\.slot.sequence).max() ?? 0
        var shortfall: UInt64?
        for candidate in header.sorted(by: { $0.slot.sequence > $1.slot.sequence }) {
            do {
                let reader = SnapshotReader(pageFile: pageFile, pageCount: byteCount / UInt64(pageFile.pageSize))
                let snapshot = try loadSnapshot(candidate.slot.state, reader: reader)
                let needed = snapshot.state.pageCount * UInt64(pageFile.pageSize)
                if byteCount < needed {
                    shortfall = needed
                    if candidate.slot.isVerified {
                        throw StoreError.truncatedStore(path: path, byteCount: byteCount, expectedAtLeast: needed)
                    }
                    continue
                }
                let recorder = PageRecorder()
                if !candidate.slot.isVerified {
                    try validateTransition(
                        candidate.slot.state, pageFile: pageFile, pageCount: snapshot.state.pageCount, recorder: recorder)
                }
                return Outcome(
                    snapshot: snapshot,
                    slots: SlotBook(chosenSlot: candidate.index, slot: candidate.slot, highestSequence: highest, snapshot: snapshot),
                    checkedPages: !candidate.slot.isVerified,
                    chosenSlotIsDurable: candidate.slot.isKnownDurable(syncedUpTo: syncedSequence),
                    checkedPageList: recorder.pages)
            } catch let error as StoreError where error.isDamage {
                if case .pageOutOfRange(let page, _) = error, page.rawValue < UInt64(Int.max) / UInt64(pageFile.pageSize),
                    (page.rawValue + 1) * UInt64(pageFile.pageSize) > byteCount
                {
                    shortfall = max(shortfall ?? 0, (page.rawValue + 1) * UInt64(pageFile.pageSize))
                }
                continue
            }
        }
        if let shortfall { throw StoreError.truncatedStore(path: path, byteCount: byteCount, expectedAtLeast: shortfall) }
        throw StoreError.noValidHeaderSlot(path: path)
    }

    /// Verifies every page the transaction that wrote `state` wrote, and those of the unsynced
    /// states before it: the state page, the head root if it is new, its lists and introduced
    /// pages, and the system-tree pages born in that transaction (found by descending only into
    /// children born then: copy-on-write puts every new page below a new parent).
    ///
    /// A state after several unsynced ones (a group commit's end, or deferred-mode commits) is
    /// checked by what it reaches instead (``validateReachable(_:reader:)``): a group's leader
    /// does not write the pages its later members freed, such as the earlier members' states.
    static func validateTransition(
        _ state: PageReference, pageFile: PageFile, pageCount: UInt64, recorder: PageRecorder? = nil
    ) throws {
        var next = state
        while true {
            let reader = SnapshotReader(pageFile: pageFile, pageCount: pageCount, recorder: recorder)
            let statePage = try reader.checkedPage(next, kind: .state)
            let record = try StateRecord.decode(statePage)
            if next == state, !record.previous.isNone, record.previous.birth > record.syncedTransaction {
                try validateReachable(record, reader: reader)
                return
            }
            let transaction = record.transaction
            if record.head.birth == transaction {
                let root = try LoadedRoot(record.head, reader: reader)
                _ = try root.invalidatedPages(reader: reader)
                for page in try root.introducedPages(reader: reader) {
                    guard page.birth == transaction else {
                        throw StoreError.malformedPage(page: page.page, reason: "introduced page has another birth")
                    }
                    _ = try reader.checkedPage(page, kind: nil)
                }
            }
            // A state's pages are born at or before its transaction: "after the one before" is
            // "in this one".
            let floor = TransactionID(transaction.rawValue - 1)
            for tree in [record.historyIndex, record.freeTree, record.lineageIndex, record.timeIndex, record.snapshots, record.packs.index, record.headTimeline] {
                try TreePages.forEach(in: tree, reader: reader, bornAfter: floor) { _, _ in }
            }
            try validateMergedLists(try historyEntries(record, reader: reader, bornAfter: floor), reader: reader, bornAfter: floor)
            try validatePackPages(record, reader: reader, bornAfter: floor)
            guard !record.previous.isNone, record.previous.birth > record.syncedTransaction else { return }
            // Decoding guarantees each previous state is strictly older, so this walk ends.
            next = record.previous
        }
    }

    /// Verifies every page born after the state's synced transaction that the state reaches: its
    /// system trees, the merged lists and pack pages written since, and for each root committed
    /// since that is still retained, its root page, its lists and its trees. Copy-on-write puts
    /// every such page below a parent born after the synced transaction, so each walk descends
    /// only into those. Pages written since and freed again before this state (an earlier group
    /// member's state page, the path copies a later member replaced) are no part of it: recovery
    /// needs only what the state it opens reaches. Cost: O(pages born since, times tree depth).
    static func validateReachable(_ record: StateRecord, reader: SnapshotReader) throws {
        let floor = record.syncedTransaction
        for tree in [record.historyIndex, record.freeTree, record.lineageIndex, record.timeIndex, record.snapshots, record.packs.index, record.headTimeline] {
            try TreePages.forEach(in: tree, reader: reader, bornAfter: floor) { _, _ in }
        }
        // Roots committed since share pages: each is checked once.
        var visited = Set<PageReference>()
        let entries = try historyEntries(record, reader: reader, bornAfter: floor)
        try validateMergedLists(entries, reader: reader, bornAfter: floor)
        try validatePackPages(record, reader: reader, bornAfter: floor)
        // A root committed since may have had pages packed (versions that left the packing
        // window, even the head's after an undo): roots' pages are read through the pack index
        // too, and only those in their slots are recorded (rewritten before the state is marked
        // durable; the pack pages holding the others were checked above).
        let rootReader = SnapshotReader(pageFile: reader.pageFile, pageCount: reader.pageCount, packs: record.packs)
        for entry in entries.values where entry.rootPage.birth > floor {
            var read: [PageReference] = []
            func check(_ page: PageReference, _ kind: PageKind) throws {
                if kind == .overflowData { _ = try rootReader.checkedPage(page, kind: .overflowData) }
                read.append(page)
            }
            // The root page and its lists' chunks, each read (and so verified) once.
            let root = try LoadedRoot(entry.rootPage, reader: rootReader)
            read += try root.metadataPages(reader: rootReader)
            var catalogLeaves: [PageReference] = []
            try TreePages.forEach(in: root.record.catalog, reader: rootReader, bornAfter: floor, visited: &visited) { page, kind in
                try check(page, kind)
                if kind == .leaf { catalogLeaves.append(page) }
            }
            for leaf in catalogLeaves {
                guard case .leafPage(let view) = try rootReader.node(leaf) else { continue }
                for index in 0..<view.count {
                    let collection = try CollectionEntry.decode(view.value(at: index), page: leaf.page)
                    try TreePages.forEach(in: collection.root, reader: rootReader, bornAfter: floor, visited: &visited, check)
                }
            }
            guard let recorder = reader.recorder else { continue }
            for page in read where page.birth > floor {
                if let packs = rootReader.packs, try packs.entry(page) != nil { continue }
                recorder.pages.append(page)
            }
        }
    }

    /// The history entries held in history index leaves born after `floor`, with the state's
    /// journal records applied (a journal record replaces or removes a leaf's entry of the same
    /// root, as for every reader).
    private static func historyEntries(
        _ state: StateRecord, reader: SnapshotReader, bornAfter floor: TransactionID
    ) throws -> [TransactionID: HistoryEntry] {
        var leaves: [PageReference] = []
        try TreePages.forEach(in: state.historyIndex, reader: reader, bornAfter: floor) { page, kind in
            if kind == .leaf { leaves.append(page) }
        }
        var entries: [TransactionID: HistoryEntry] = [:]
        for leaf in leaves {
            guard case .leafPage(let view) = try reader.node(leaf) else { continue }
            for index in 0..<view.count {
                let entry = try HistoryEntry.decode(view.value(at: index), page: leaf.page)
                entries[entry.root] = entry
            }
        }
        for record in state.journal.historyIndex.records {
            let root = record.key.withUnsafeBytes { HistoryIndex.root(of: $0) }
            guard let value = record.value else {
                entries[root] = nil
                continue
            }
            entries[root] = try HistoryEntry.decode(.inline(value), page: state.journal.historyIndex.page)
        }
        return entries
    }

    /// Merged lifetime lists written by this transaction hang off history entries in leaves it
    /// wrote, or in the state's journal (format version 4); read (and so verify) each of their
    /// chunks. A journal record replaces or removes a leaf's entry of the same root, as for
    /// every reader: the chunks of an entry the journal replaced may have been released.
    private static func validateMergedLists(
        _ entries: [TransactionID: HistoryEntry], reader: SnapshotReader, bornAfter floor: TransactionID
    ) throws {
        for entry in entries.values {
            for (list, rootOwned) in [(entry.deadList, entry.deadListIsRootOwned), (entry.newList, entry.newListIsRootOwned)]
            where !rootOwned && !list.isInline && list.firstChunk.birth > floor {
                _ = try PageList.read(list, owner: nil, inlineOffset: 0, reader: reader)
            }
        }
    }

    /// Pack pages written by this transaction are named by directory entries in pack index
    /// leaves it wrote; read (and so verify) each of them.
    private static func validatePackPages(_ state: StateRecord, reader: SnapshotReader, bornAfter floor: TransactionID) throws {
        var leaves: [PageReference] = []
        try TreePages.forEach(in: state.packs.index, reader: reader, bornAfter: floor) { page, kind in
            if kind == .leaf { leaves.append(page) }
        }
        for leaf in leaves {
            guard case .leafPage(let view) = try reader.node(leaf) else { continue }
            for index in 0..<view.count {
                guard let packPage = PackIndex.packPage(ofDirectoryKey: Array(view.key(at: index))),
                    case .directory(let birth, _, _) = try PackIndex.decode(view.value(at: index), page: leaf.page),
                    birth > floor
                else { continue }
                _ = try reader.checkedPage(PageReference(page: packPage, birth: birth), kind: .pack)
            }
        }
    }

    /// Writes every page in `pages` again with the bytes it holds (each read back and verified
    /// first), so the next sync really puts them on disk. O(pages).
    static func rewrite(_ pages: [PageReference], pageFile: PageFile, pageCount: UInt64) throws {
        var seen = Set<PageID>()
        var buffers: [PageBuffer] = []
        for reference in pages where seen.insert(reference.page).inserted {
            buffers.append(try pageFile.read(reference, kind: nil, pageCount: pageCount, cached: false))
            if buffers.count == 256 {
                try pageFile.write(buffers)
                buffers.removeAll(keepingCapacity: true)
            }
        }
        try pageFile.write(buffers)
    }
}

