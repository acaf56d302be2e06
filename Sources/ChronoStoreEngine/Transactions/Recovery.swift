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
    }

    static let headerPrefixByteCount = HeaderSlot.offsets[1] + HeaderSlot.byteCount

    /// The valid header slots.
    static func readHeaderSlots(_ pageFile: PageFile) throws -> [(index: Int, slot: HeaderSlot)] {
        var prefix = [UInt8](repeating: 0, count: headerPrefixByteCount)
        let complete = try prefix.withUnsafeMutableBytes { raw in
            do { return try pageFile.file.readFully(into: raw, at: 0) } catch let error as IOError { throw StoreError.io(error) }
        }
        guard complete else { return [] }
        return prefix.withUnsafeBytes { raw in
            HeaderSlot.offsets.enumerated().compactMap { index, offset in
                HeaderSlot.decode(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + HeaderSlot.byteCount)]))
                    .map { (index, $0) }
            }
        }
    }

    /// Reads a state record and its head root.
    static func loadSnapshot(_ state: PageReference, reader: SnapshotReader) throws -> StoreSnapshot {
        let statePage = try reader.pageFile.read(state, kind: .state, pageCount: reader.pageCount, cached: false)
        let record = try StateRecord.decode(statePage)
        let headPage = try reader.pageFile.read(record.head, kind: .root, pageCount: record.pageCount, cached: false)
        return StoreSnapshot(stateReference: state, state: record, head: try RootRecord.decode(headPage))
    }

    /// Chooses the state to open: the newest slot that verifies, else the other one.
    /// - Throws: ``StoreError/truncatedStore(path:byteCount:expectedAtLeast:)`` when the file is
    ///   shorter than a verified state needs, ``StoreError/noValidHeaderSlot(path:)`` when neither
    ///   slot leads to a state that verifies.
    static func recover(_ pageFile: PageFile, path: String) throws -> Outcome {
        let header = try readHeaderSlots(pageFile)
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
                if !candidate.slot.isVerified {
                    try validateTransition(candidate.slot.state, pageFile: pageFile, pageCount: snapshot.state.pageCount)
                }
                return Outcome(
                    snapshot: snapshot,
                    slots: SlotBook(chosenSlot: candidate.index, slot: candidate.slot, highestSequence: highest, snapshot: snapshot),
                    checkedPages: !candidate.slot.isVerified, chosenSlotIsDurable: candidate.slot.isDurable)
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
    static func validateTransition(_ state: PageReference, pageFile: PageFile, pageCount: UInt64) throws {
        var next = state
        while true {
            let reader = SnapshotReader(pageFile: pageFile, pageCount: pageCount)
            let statePage = try pageFile.read(next, kind: .state, pageCount: pageCount, cached: false)
            let record = try StateRecord.decode(statePage)
            let transaction = record.transaction
            if record.head.birth == transaction {
                let root = try LoadedRoot(record.head, reader: reader)
                _ = try root.invalidatedPages(reader: reader)
                for page in try root.introducedPages(reader: reader) {
                    guard page.birth == transaction else {
                        throw StoreError.malformedPage(page: page.page, reason: "introduced page has another birth")
                    }
                    _ = try pageFile.read(page, kind: nil, pageCount: pageCount, cached: false)
                }
            }
            for tree in [record.historyIndex, record.freeTree, record.lineageIndex, record.timeIndex, record.snapshots] {
                try TreePages.forEach(in: tree, reader: reader, bornIn: transaction) { _, _ in }
            }
            try validateMergedLists(record, reader: reader)
            guard !record.previous.isNone, record.previous.birth > record.syncedTransaction else { return }
            // Decoding guarantees each previous state is strictly older, so this walk ends.
            next = record.previous
        }
    }

    /// Merged lifetime lists written by this transaction hang off history entries in leaves it
    /// wrote; read (and so verify) each of their chunks.
    private static func validateMergedLists(_ state: StateRecord, reader: SnapshotReader) throws {
        var leaves: [PageReference] = []
        try TreePages.forEach(in: state.historyIndex, reader: reader, bornIn: state.transaction) { page, kind in
            if kind == .leaf { leaves.append(page) }
        }
        for leaf in leaves {
            guard case .leafPage(let view) = try reader.node(leaf) else { continue }
            for index in 0..<view.count {
                let entry = try HistoryEntry.decode(view.value(at: index), page: leaf.page)
                for (list, rootOwned) in [(entry.deadList, entry.deadListIsRootOwned), (entry.newList, entry.newListIsRootOwned)]
                where !rootOwned && !list.isInline && list.firstChunk.birth == state.transaction {
                    _ = try PageList.read(list, owner: nil, inlineOffset: 0, reader: reader)
                }
            }
        }
    }
}
