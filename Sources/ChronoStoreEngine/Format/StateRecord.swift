// The state page: what a header slot names — the head root, the system trees, the allocation mark.

/// The store's state after one transaction.
///
/// A header slot points at the newest state record. Commits write a root and a state; later
/// history operations (undo, redo, snapshots) write only a state.
///
/// State page layout (after the 24-byte page header; little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 16 | previous state (page, birth) |
/// | 40 | 8 | synced transaction: newest state known durable when this one was written |
/// | 48 | 16 | head root (page, birth) |
/// | 64 | 16 | history index root: root id → root page |
/// | 80 | 16 | free tree root: (release transaction, sequence) → page ids |
/// | 96 | 8 | page count: the file's allocation mark, header page included |
/// | 104 | 8 | tail: the oldest retained root id |
/// | 112 | 8 | retained root count |
/// | 120 | 8 | pages recorded in the free tree (reusable or waiting) |
/// | 128 | 16 | lineage index root: (lineage parent, child) → nothing |
/// | 144 | 16 | time index root: (commit time, root id) → nothing |
/// | 160 | 1 | retention policy kind: 0 all, 1 last N roots, 2 N days |
/// | 161 | 1 | flags: bit 0 = drop undone branches when a new commit branches off, bit 1 = secure delete, bit 2 = pack index keys birth first (version 3), bit 3 = pack entries are named (version 5), bit 4 = the head may reach packed versions, bit 5 = bit 4 is kept (see ``headMayReachPackedVersions``) |
/// | 162 | 6 | reserved (0) |
/// | 168 | 8 | retention parameter (N) |
/// | 176 | 8 | prune cursor: unused; 0 after any pruning, else the predecessor's value |
/// | 184 | 16 | snapshot tree root: name → (root id, time, record count) |
/// | 200 | 16 | pack index root (format version 2; none in version 1) |
/// | 216 | 8 | pack cursor: the newest root whose dead list was packed |
/// | 224 | 8 | pack depth: packing walks again once the head is this deep plus the window and a batch |
/// | 232 | 8 | packed pages: pages stored as pack entries |
/// | 240 | 8 | packed bytes: bytes of those entries |
/// | 248 | 8 | pack pages |
/// | 256 | 16 | head timeline root: (time, transaction) → root that became the head |
/// | 272 | 8 | head timeline record count |
/// | 280 | 8 | secure delete: free-tree entries released at or before this transaction are zeroed |
/// | 288 | … | state journal (format version 4; zero before): see ``StateJournal`` |
package struct StateRecord: Equatable, Sendable {
    static let previousOffset = PageHeader.byteCount
    static let syncedOffset = previousOffset + PageReference.byteCount
    static let headOffset = syncedOffset + 8
    static let historyOffset = headOffset + PageReference.byteCount
    static let freeTreeOffset = historyOffset + PageReference.byteCount
    static let pageCountOffset = freeTreeOffset + PageReference.byteCount
    static let tailOffset = pageCountOffset + 8
    static let retainedCountOffset = tailOffset + 8
    static let freePageCountOffset = retainedCountOffset + 8
    static let lineageOffset = freePageCountOffset + 8
    static let timeIndexOffset = lineageOffset + PageReference.byteCount
    static let retentionKindOffset = timeIndexOffset + PageReference.byteCount
    static let flagsOffset = retentionKindOffset + 1
    static let retentionParameterOffset = flagsOffset + 7
    static let pruneCursorOffset = retentionParameterOffset + 8
    static let snapshotsOffset = pruneCursorOffset + 8
    static let packIndexOffset = snapshotsOffset + PageReference.byteCount
    static let packCursorOffset = packIndexOffset + PageReference.byteCount
    static let packDepthOffset = packCursorOffset + 8
    static let packedPageCountOffset = packDepthOffset + 8
    static let packedByteCountOffset = packedPageCountOffset + 8
    static let packPageCountOffset = packedByteCountOffset + 8
    static let headTimelineOffset = packPageCountOffset + 8
    static let headTimelineCountOffset = headTimelineOffset + PageReference.byteCount
    static let zeroedThroughOffset = headTimelineCountOffset + 8
    package static let byteCount = zeroedThroughOffset + 8

    package var transaction: TransactionID
    package var previous: PageReference
    package var syncedTransaction: TransactionID
    package var head: PageReference
    package var historyIndex: PageReference
    package var freeTree: PageReference
    package var pageCount: UInt64
    package var tail: TransactionID
    package var retainedRootCount: UInt64
    package var freePageCount: UInt64
    package var lineageIndex: PageReference = .none
    package var timeIndex: PageReference = .none
    package var retention: RetentionPolicy = .limitless
    package var dropsUndoneBranches = false
    /// Unused by pruning, which always starts from the oldest root: a commit that prunes writes
    /// none (0), one that does not copies its predecessor's value, so stores hold 0.
    package var pruneCursor: TransactionID = .none
    package var snapshots: PageReference = .none
    /// Packed history (see Docs/RootChain.md, "Packed history").
    package var packs = PackCounters()
    /// The head timeline (see `HeadTimeline`); none until the head first changes.
    package var headTimeline: PageReference = .none
    package var headTimelineCount: UInt64 = 0
    /// Freed pages are overwritten with zeros (see `Store+SecureDelete.swift`).
    package var secureDelete = false
    package var zeroedThrough: TransactionID = .none
    /// Edits of the history trees not yet in their pages (format version 4; see `JournaledTree`).
    package var journal = StateJournal()
    /// Whether the head may reach packed versions (state flag bit 4), or nil when the state does
    /// not say (bit 5 clear: written by a library before this flag, or by one that does not keep
    /// it). See Docs/Robustness.md, "Reading a slot a commit may rewrite".
    package var headMayReachPackedVersions: Bool?

    /// Whether a reader of the head must look for versions born before the pack cursor in the
    /// pack index before their slot: the head may reach packed versions, or the state does not
    /// say and the store has packed history. No walk can settle a state that does not say: the
    /// flag's rules rest on every packed version having been replaced by a lineage ancestor of the
    /// head, and an older writer may have left packed versions whose replacing root it dropped (a
    /// tip of an undone branch, the old line after a revert) while their lineage parent, still on
    /// the head's line, reaches them. So a commit on such a state writes the flag set.
    package var headReadsOldVersionsFromPacks: Bool {
        headMayReachPackedVersions ?? !packs.index.isNone
    }

    package init(
        transaction: TransactionID, previous: PageReference, syncedTransaction: TransactionID, head: PageReference,
        historyIndex: PageReference, freeTree: PageReference, pageCount: UInt64, tail: TransactionID,
        retainedRootCount: UInt64, freePageCount: UInt64
    ) {
        self.transaction = transaction
        self.previous = previous
        self.syncedTransaction = syncedTransaction
        self.head = head
        self.historyIndex = historyIndex
        self.freeTree = freeTree
        self.pageCount = pageCount
        self.tail = tail
        self.retainedRootCount = retainedRootCount
        self.freePageCount = freePageCount
    }

    package func encode(into bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeReference(previous, at: Self.previousOffset)
        bytes.storeLittleEndian(syncedTransaction.rawValue, at: Self.syncedOffset)
        bytes.storeReference(head, at: Self.headOffset)
        bytes.storeReference(historyIndex, at: Self.historyOffset)
        bytes.storeReference(freeTree, at: Self.freeTreeOffset)
        bytes.storeLittleEndian(pageCount, at: Self.pageCountOffset)
        bytes.storeLittleEndian(tail.rawValue, at: Self.tailOffset)
        bytes.storeLittleEndian(retainedRootCount, at: Self.retainedCountOffset)
        bytes.storeLittleEndian(freePageCount, at: Self.freePageCountOffset)
        bytes.storeReference(lineageIndex, at: Self.lineageOffset)
        bytes.storeReference(timeIndex, at: Self.timeIndexOffset)
        bytes.storeLittleEndian(retention.kindByte, at: Self.retentionKindOffset)
        bytes.storeLittleEndian(
            UInt8(dropsUndoneBranches ? 1 : 0) | UInt8(secureDelete ? 2 : 0) | UInt8(packs.keyOrder == .birthFirst ? 4 : 0)
                | UInt8(packs.namesEntries ? 8 : 0) | UInt8(headMayReachPackedVersions == true ? 16 : 0)
                | UInt8(headMayReachPackedVersions == nil ? 0 : 32),
            at: Self.flagsOffset)
        bytes.storeLittleEndian(retention.parameter, at: Self.retentionParameterOffset)
        bytes.storeLittleEndian(pruneCursor.rawValue, at: Self.pruneCursorOffset)
        bytes.storeReference(snapshots, at: Self.snapshotsOffset)
        bytes.storeReference(packs.index, at: Self.packIndexOffset)
        bytes.storeLittleEndian(packs.cursor.rawValue, at: Self.packCursorOffset)
        bytes.storeLittleEndian(packs.depth, at: Self.packDepthOffset)
        bytes.storeLittleEndian(packs.packedPages, at: Self.packedPageCountOffset)
        bytes.storeLittleEndian(packs.packedBytes, at: Self.packedByteCountOffset)
        bytes.storeLittleEndian(packs.packPages, at: Self.packPageCountOffset)
        bytes.storeReference(headTimeline, at: Self.headTimelineOffset)
        bytes.storeLittleEndian(headTimelineCount, at: Self.headTimelineCountOffset)
        bytes.storeLittleEndian(zeroedThrough.rawValue, at: Self.zeroedThroughOffset)
        journal.encode(into: bytes)
    }

    /// Whether the store has a head timeline (pages or journaled records); reads by time use
    /// the time index when it has none.
    package var hasHeadTimeline: Bool { !headTimeline.isNone || !journal.headTimeline.isEmpty }

    /// Decodes a verified state page.
    package static func decode(_ page: PageBuffer) throws -> StateRecord {
        let bytes = page.readOnly
        var record = StateRecord(
            transaction: page.birth,
            previous: bytes.loadReference(at: previousOffset),
            syncedTransaction: TransactionID(bytes.loadLittleEndian(at: syncedOffset, as: UInt64.self)),
            head: bytes.loadReference(at: headOffset),
            historyIndex: bytes.loadReference(at: historyOffset),
            freeTree: bytes.loadReference(at: freeTreeOffset),
            pageCount: bytes.loadLittleEndian(at: pageCountOffset),
            tail: TransactionID(bytes.loadLittleEndian(at: tailOffset, as: UInt64.self)),
            retainedRootCount: bytes.loadLittleEndian(at: retainedCountOffset),
            freePageCount: bytes.loadLittleEndian(at: freePageCountOffset))
        record.lineageIndex = bytes.loadReference(at: lineageOffset)
        record.timeIndex = bytes.loadReference(at: timeIndexOffset)
        record.retention = try RetentionPolicy.decode(
            kind: bytes.loadLittleEndian(at: retentionKindOffset), parameter: bytes.loadLittleEndian(at: retentionParameterOffset),
            page: page.pageID)
        let flags = bytes.loadLittleEndian(at: flagsOffset, as: UInt8.self)
        record.dropsUndoneBranches = flags & 1 != 0
        record.secureDelete = flags & 2 != 0
        record.headMayReachPackedVersions = flags & 32 == 0 ? nil : flags & 16 != 0
        record.pruneCursor = TransactionID(bytes.loadLittleEndian(at: pruneCursorOffset, as: UInt64.self))
        record.snapshots = bytes.loadReference(at: snapshotsOffset)
        record.packs = PackCounters(
            index: bytes.loadReference(at: packIndexOffset),
            cursor: TransactionID(bytes.loadLittleEndian(at: packCursorOffset, as: UInt64.self)),
            depth: bytes.loadLittleEndian(at: packDepthOffset), packedPages: bytes.loadLittleEndian(at: packedPageCountOffset),
            packedBytes: bytes.loadLittleEndian(at: packedByteCountOffset), packPages: bytes.loadLittleEndian(at: packPageCountOffset),
            keyOrder: flags & 4 != 0 ? .birthFirst : .pageFirst, namesEntries: flags & 8 != 0)
        record.headTimeline = bytes.loadReference(at: headTimelineOffset)
        record.headTimelineCount = bytes.loadLittleEndian(at: headTimelineCountOffset)
        record.zeroedThrough = TransactionID(bytes.loadLittleEndian(at: zeroedThroughOffset, as: UInt64.self))
        record.journal = try StateJournal.decode(bytes, page: page.pageID)
        guard !record.head.isNone, record.head.birth <= record.transaction else {
            throw StoreError.malformedPage(page: page.pageID, reason: "state record names no valid head")
        }
        try record.checkCounts(pageSize: page.pageSize, page: page.pageID)
        // Each state names an older one, so walking the chain always ends.
        guard record.previous.isNone || record.previous.birth < record.transaction else {
            throw StoreError.malformedPage(
                page: page.pageID, reason: "previous state \(record.previous.birth) is not older than \(record.transaction)")
        }
        return record
    }

    /// Bounds the counts read from disk, so arithmetic on them cannot overflow: the page count
    /// must address bytes a file can have, and the pages it counts must fit under it.
    private func checkCounts(pageSize: Int, page: PageID) throws {
        guard pageCount >= 2, pageCount <= UInt64(Int.max) / UInt64(pageSize) else {
            throw StoreError.malformedPage(page: page, reason: "page count \(pageCount) is impossible")
        }
        guard headTimelineCount <= UInt64(Int.max) else {
            throw StoreError.malformedPage(page: page, reason: "head timeline count \(headTimelineCount) is impossible")
        }
        // A packed root page lives in a pack page, so roots may outnumber pages, though not bytes.
        guard freePageCount < pageCount, retainedRootCount < pageCount * UInt64(pageSize), packs.packPages < pageCount else {
            throw StoreError.malformedPage(
                page: page, reason: "\(freePageCount) free pages or \(retainedRootCount) roots do not fit in \(pageCount) pages")
        }
    }
}

/// The state's packed-history fields (all zero in format version 1).
package struct PackCounters: Equatable, Sendable {
    /// The pack index tree (``PackIndex``); none until something is packed.
    package var index: PageReference = .none
    /// The newest root whose dead list was packed.
    package var cursor: TransactionID = .none
    /// Packing resumes once the head is this deep plus the window and a batch.
    package var depth: UInt64 = 0
    /// Pages stored as pack entries, and the bytes of those entries.
    package var packedPages: UInt64 = 0
    package var packedBytes: UInt64 = 0
    /// Pack pages in the file.
    package var packPages: UInt64 = 0
    /// The order of the pack index's page keys: bit 2 of the state's flags (format version 3);
    /// page first in every version 2 file and in files upgraded from one.
    package var keyOrder: PackIndex.KeyOrder = .pageFirst
    /// Whether pack entries begin with the page they rebuild: bit 3 of the state's flags (format
    /// version 5), set in stores with secure delete when their index is made.
    package var namesEntries = false
}
