// An open store: the published state, readers' pins, the writer, and publishing commits.

import Dispatch

/// An open ChronoStore data file.
///
/// `@unchecked Sendable`: mutable fields are guarded by `lock`; one writer at a time is admitted
/// by `writerGate` (threads of this process) and the writer lock on the data file (other open
/// files of it, in this process or another).
package final class Store: @unchecked Sendable {
    package let path: String
    package let pageFile: PageFile
    package let options: StoreOptions
    package let preamble: FilePreamble
    /// Set once this process upgraded the file's format (guarded by `lock`).
    var upgradedFormatVersion: UInt32?
    let coordination: CoordinationFile?
    /// The locks on the data file (nil for in-memory files).
    let fileLocks: FileLocks?
    /// The data file's device and inode, and the resolved path that must keep naming it.
    let identity: FileIdentity?
    let resolvedPath: String
    /// Opened with `readOnly`: nothing is ever written, to the data file or beside it.
    package let isReadOnly: Bool
    /// The data file had more than one hard link when opened.
    let hasSeveralNames: Bool
    let writerGate = WriterGate()
    /// Where packing commits are built (see ``startPackingCommit()``).
    let packingQueue = DispatchQueue(label: "ChronoStore.packing", qos: .userInitiated)
    /// Durable commits written and waiting for the sync they will share (see `GroupCommit`).
    let groupCommit = GroupCommit()
    /// Where groups are led for commits whose writers wait without a thread (see
    /// ``notifyWhenDurable(_:_:)``).
    let relayQueue = DispatchQueue(label: "ChronoStore.sync relay", qos: .userInitiated)
    /// What pruning remembers between commits (only the writer uses it).
    let pruningMemory = PruningMemory()

    let lock = Lock()
    // Guarded by `lock`:
    var published: StoreSnapshot
    var pins: [TransactionID: Int] = [:]
    var failure: IOError?
    private var isClosed = false
    var slots: SlotBook
    var seenChangeCounter: UInt64 = 0
    private var seenSyncFailureCount: UInt64 = 0
    /// Set once the path names another file (the store was replaced): nothing more is read or written.
    private var replaced = false
    /// The highest transaction id this process has handed out.
    private var transactionFloor = TransactionID.none
    /// Secure delete: free-tree entries released at or before this were overwritten with zeros.
    var zeroedThrough = TransactionID.none
    /// Secure delete: the pages this handle's last zeroing pass left zero (it wrote the zeros, or
    /// found them), after its commit `knownZeroAfter`; see `overwriteFreedPages`.
    var knownZeroPages: Set<PageID> = []
    var knownZeroAfter = TransactionID.none
    /// The error the last packing commit threw (see ``startPackingCommit()``); nil when none has
    /// failed, or the last one succeeded.
    package var packingCommitFailure: (any Error)? {
        get { lock.withLock { packingCommitFailureStorage } }
        set { lock.withLock { packingCommitFailureStorage = newValue } }
    }
    private var packingCommitFailureStorage: (any Error)?

    init(path: String, file: any StoreFile, preamble: FilePreamble, options: StoreOptions,
         access: StoreAccess, recovered: Recovery.Outcome) {
        self.path = path
        self.preamble = preamble
        self.options = options
        self.coordination = access.coordination
        self.fileLocks = access.fileLocks
        self.identity = access.identity
        self.resolvedPath = access.resolvedPath ?? path
        self.isReadOnly = access.isReadOnly
        self.hasSeveralNames = access.hasSeveralNames
        let pageCapacity = max(16, options.cacheByteCount / preamble.pageSize)
        self.pageFile = PageFile(
            file: file, pageSize: preamble.pageSize, cache: PageCache(pageCapacity: pageCapacity),
            mapsFile: options.memoryMappedReads)
        self.published = recovered.snapshot
        self.slots = recovered.slots
        self.seenChangeCounter = coordination?.changeCounter ?? 0
        self.seenSyncFailureCount = coordination?.syncFailureCount ?? 0
    }

    package var pageSize: Int { preamble.pageSize }
    /// The file format version the store's preamble records (2 holds packed history).
    package var formatVersion: UInt32 { lock.withLock { upgradedFormatVersion ?? preamble.formatVersion } }

    /// The device and inode of the data file this store has open (nil for in-memory files).
    package var fileIdentity: FileIdentity? { identity }

    /// The device and inode of the file `path` names now (nil if none).
    package static func fileIdentity(atPath path: String) -> FileIdentity? { Platform.identity(atPath: path) }

    /// The newest published state (refreshed from disk when another process committed).
    package var snapshot: StoreSnapshot {
        get throws {
            try refreshIfChanged()
            return lock.withLock { published }
        }
    }

    /// The longest key this store accepts.
    package var maximumKeyByteCount: Int { NodeLayout.maximumKeyByteCount(pageSize: pageSize) }

    // MARK: - Readers

    /// Starts a read transaction on the current head; close it (or let it go) to unpin.
    package func beginRead() throws -> ReadTransaction {
        while true {
            try checkOpen()
            let counterBefore = coordination?.changeCounter
            try refreshIfChanged()
            let snapshot = try lock.withLock { () throws -> StoreSnapshot in
                pins[published.head.transaction, default: 0] += 1
                do { try advertiseLocked() } catch {
                    unpinLocked(published.head.transaction)
                    throw error
                }
                return published
            }
            // Another process may have committed between the refresh and the advertisement;
            // then start again so the pin is on the newest head. The fence orders the pin
            // before this second look (the pin's fcntl is one too; this keeps it explicit).
            coordination?.fence()
            if let coordination, coordination.changeCounter != counterBefore {
                unpin(snapshot.head.transaction)
                continue
            }
            return ReadTransaction(store: self, snapshot: snapshot)
        }
    }

    /// Runs `body` in a read transaction.
    package func read<Result>(_ body: (ReadTransaction) throws -> Result) throws -> Result {
        let transaction = try beginRead()
        defer { transaction.close() }
        return try body(transaction)
    }

    func unpin(_ root: TransactionID) {
        lock.withLock {
            unpinLocked(root)
            // Dropping a pin cannot fail in a way that matters: at worst an older pin stays.
            try? advertiseLocked()
        }
    }

    private func unpinLocked(_ root: TransactionID) {
        if let count = pins[root] {
            if count <= 1 { pins.removeValue(forKey: root) } else { pins[root] = count - 1 }
        }
    }

    /// Publishes this store's oldest pinned root where writers of other handles see it: in its
    /// reader slot of the lock file (one atomic store), and, for a handle without a slot (read-only)
    /// or a store with several hard links (other names use other lock files), also as a lock on
    /// the data file itself (a system call, only when the oldest pin changes).
    func advertiseLocked() throws {
        let oldest = pins.keys.min()?.rawValue ?? 0
        coordination?.advertiseOldestRead(oldest)
        guard pinsOnDataFile else { return }
        do { try fileLocks?.pinOldestRead(oldest) } catch let error as IOError {
            throw StoreError.io(error)
        }
    }

    /// Whether pins are also advertised as locks on the data file.
    private var pinsOnDataFile: Bool { fileLocks != nil && (coordination?.slotIndex == nil || hasSeveralNames) }

    // MARK: - The writer

    /// Starts the write transaction, waiting for any other writer (thread or process) to finish.
    /// - Throws: ``StoreError/writesDisabledAfterSyncFailure(underlying:)`` after a failed sync.
    package func beginWrite() throws -> WriteTransaction {
        // Waiting, it always gets the writer.
        try beginWrite(waiting: true)!
    }

    /// Starts the write transaction if that needs no wait: no other writer (thread or process)
    /// holds the writer and the file needs no format upgrade (two syncs). Returns nil otherwise,
    /// having taken nothing; ``beginWrite()`` then waits.
    ///
    /// The typed API begins its transactions here on the caller's thread, and goes to its own
    /// queue only when this says it would wait.
    /// - Throws: as ``beginWrite()``.
    package func beginWriteWithoutWaiting() throws -> WriteTransaction? {
        try beginWrite(waiting: false)
    }

    /// Starts a write transaction with the gate already held (handed over by a commit that made
    /// packing due; see ``startPackingCommit()``). On an error the gate is released.
    func beginWriteHoldingGate() throws -> WriteTransaction {
        do {
            try checkOpen()
        } catch {
            releaseWriter()
            throw error
        }
        return try beginWrite(waiting: true, gateHeld: true)!
    }

    private func beginWrite(waiting: Bool, gateHeld: Bool = false) throws -> WriteTransaction? {
        if !gateHeld {
            try checkOpen()
            if isReadOnly { throw StoreError.readOnlyStore(path: path) }
            if !waiting && formatVersion < FilePreamble.currentFormatVersion { return nil }
        }
        guard let tookFileWriter = try acquireWriter(waiting: waiting, gateHeld: gateHeld) else { return nil }
        do {
            try checkOpen()
            // While this process keeps the file's writer lock for registered commits, no other
            // process can have written; the header then holds this process's own pending slot.
            // Without waiting, a refresh that would have to sync first (another process left
            // its commit unsynced, or died in its sync) gives everything back: the caller then
            // begins on a thread that may wait.
            if tookFileWriter, try !refreshForWriter(allowingSync: waiting) {
                releaseWriter()
                return nil
            }
            try upgradeFormatIfNeeded()
            let (snapshot, horizon, pinned, id, epoch, nothingPending) = try lock.withLock {
                () throws -> (StoreSnapshot, TransactionID, PinnedRoots, TransactionID, UInt64, Bool) in
                if let failure { throw StoreError.writesDisabledAfterSyncFailure(underlying: failure) }
                let elsewhere = oldestReadElsewhere()
                let (base, epoch, nothingPending) = groupCommit.base(published: published)
                let id = try reserveTransactionLocked()
                return (base, horizonLocked(elsewhere), pinnedRootsLocked(elsewhere, base: base), id, epoch, nothingPending)
            }
            if nothingPending { pageFile.staged.removeAll() }
            let transaction = WriteTransaction(store: self, base: snapshot, transaction: id, horizon: horizon, pinnedRoots: pinned)
            transaction.groupEpoch = epoch
            return transaction
        } catch {
            releaseWriter()
            throw error
        }
    }

    /// Runs `body` in a write transaction and commits it; a thrown error aborts it.
    /// - Returns: what `body` returned and the new root's id (nil when nothing changed).
    @discardableResult
    package func write<Result>(label: String? = nil, _ body: (WriteTransaction) throws -> Result) throws -> (Result, TransactionID?) {
        let transaction = try beginWrite()
        transaction.label = label
        let result: Result
        do {
            result = try body(transaction)
        } catch {
            transaction.abort()
            throw error
        }
        return (result, try transaction.commit())
    }

    /// A transaction id never used before, by this process or (through the lock file) any other.
    ///
    /// Ids must never repeat: a commit lost in a crash, or a transaction that wrote pages and then
    /// aborted, may have left pages on disk born with its id, and a later commit with the same id
    /// whose writes were only partly durable would otherwise take those stale pages for its own.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming the state page when the ids are
    /// used up, which only a damaged or crafted file can do (ids grow by one a transaction).
    private func reserveTransactionLocked() throws -> TransactionID {
        var id = max(published.transaction, transactionFloor)
        if let shared = coordination?.transactionFloor { id = max(id, TransactionID(shared)) }
        guard id.rawValue < UInt64.max - Self.lostIdGap else {
            throw StoreError.malformedPage(
                page: published.stateReference.page, reason: "transaction id \(id.rawValue) leaves no ids for new transactions")
        }
        id = id.next
        transactionFloor = id
        coordination?.raiseTransactionFloor(id.rawValue)
        return id
    }

    /// After recovery from a crash: skip past every id the lost commits can have used. Commits
    /// lost to power failure are at most the unsynced ones, fewer than `maximumCheckpointInterval`.
    func skipIdsLostInCrash() {
        lock.withLock {
            // Saturating: a damaged state's id near the end is refused by the next write instead.
            let (skipped, overflow) = published.transaction.rawValue.addingReportingOverflow(Self.lostIdGap)
            transactionFloor = max(transactionFloor, TransactionID(overflow ? UInt64.max : skipped))
        }
    }

    /// The floor this process reserved ids up to (raised past lost ids after a crash).
    var reservedTransactionFloor: UInt64 { lock.withLock { transactionFloor.rawValue } }

    /// The change counter as it was before recovery read the header: any commit published since
    /// makes the first read refresh.
    func rememberChangeCounter(_ counter: UInt64) {
        lock.withLock { seenChangeCounter = counter }
    }

    /// Opened without the writer lock on a state that may not be synced: the first write syncs
    /// and marks it before building on it.
    func expectUnsyncedNewest() {
        lock.withLock { slots.newestMayBeUnsynced = true }
    }

    /// How far ids jump after crash recovery.
    static let lostIdGap: UInt64 = 1 << 16

    /// Slots up to this sequence were synced by their writers (0 without a lock file).
    var syncedSequence: UInt64 { coordination?.syncedSequence ?? 0 }

    /// Takes the writer: this process's gate, then the writer lock on the data file (every
    /// name of the store shares it), then the lock file's `flock` that format-1 processes use.
    /// Then confirms the path still names this file: a commit into a replaced file would be
    /// acknowledged but never seen.
    /// Registered commits that are not yet synced keep the file's locks for the process: then
    /// only the gate is taken (and the path checked), and this returns false.
    /// - Parameter waiting: false to take nothing and return nil when another writer holds any
    ///   of them.
    /// - Parameter gateHeld: the caller holds the gate already (it was handed over).
    private func acquireWriter(waiting: Bool, gateHeld: Bool = false) throws -> Bool? {
        if gateHeld {
            // Taken over from the commit that handed it on.
        } else if waiting {
            writerGate.acquire()
        } else if !writerGate.tryAcquire() {
            return nil
        }
        guard groupCommit.takeFileWriter() else {
            do { try checkStillNamed() } catch {
                releaseWriter()
                throw error
            }
            return false
        }
        func giveUp() {
            groupCommit.fileWriterNotTaken()
            writerGate.release()
        }
        if waiting {
            do {
                try fileLocks?.lockWriter()
            } catch {
                giveUp()
                throw StoreError.io(error as? IOError ?? IOError(operation: "fcntl", path: path, code: 0))
            }
            do {
                try coordination?.lockWriter()
            } catch {
                fileLocks?.unlockWriter()
                giveUp()
                throw StoreError.io(error as? IOError ?? IOError(operation: "flock", path: path, code: 0))
            }
        } else {
            // The lock file's `flock` first: it belongs to this open file alone, so giving it up
            // again cannot drop a lock another handle of this process holds, as unlocking a
            // per-process `fcntl` lock (Apple platforms) would. Nothing here waits, so taking
            // the two in the other order than above cannot deadlock.
            do {
                if let coordination, try !coordination.tryLockWriter() {
                    giveUp()
                    return nil
                }
            } catch {
                giveUp()
                throw StoreError.io(error as? IOError ?? IOError(operation: "flock", path: path, code: 0))
            }
            do {
                if let fileLocks, try !fileLocks.tryLockWriter() {
                    coordination?.unlockWriter()
                    giveUp()
                    return nil
                }
            } catch {
                coordination?.unlockWriter()
                giveUp()
                throw StoreError.io(error as? IOError ?? IOError(operation: "fcntl", path: path, code: 0))
            }
        }
        do {
            try checkStillNamed()
        } catch {
            releaseWriter()
            throw error
        }
        return true
    }

    /// Throws ``StoreError/storeReplaced(path:)`` once the store's path names another file.
    private func checkStillNamed() throws {
        guard let identity else { return }
        if lock.withLock({ replaced }) { throw StoreError.storeReplaced(path: path) }
        guard Platform.identity(atPath: resolvedPath) == identity else {
            lock.withLock { replaced = true }
            throw StoreError.storeReplaced(path: path)
        }
    }

    /// The oldest root a reader of another handle (any process, any name) may read, or nil.
    func oldestReadElsewhere() -> UInt64? {
        // A failed query must not free pages someone reads: then treat everything as pinned.
        do {
            let inSlots = try coordination?.oldestReadByOthers()
            let onFile = try fileLocks?.oldestReadElsewhere()
            return [inSlots, onFile].compactMap { $0 }.min()
        } catch {
            return 1
        }
    }

    /// Pages released at or before this transaction may be reused: it is durable, and no reader
    /// in any process reads an older root.
    func horizonLocked(_ elsewhere: UInt64?) -> TransactionID {
        var horizon = slots.syncedTransaction
        // A group's slot makes recovery check every commit of the group: none may reuse their pages.
        if let limit = slots.reuseLimit { horizon = min(horizon, limit) }
        if let oldest = pins.keys.min() { horizon = min(horizon, oldest) }
        if let other = elsewhere { horizon = min(horizon, TransactionID(other)) }
        return horizon
    }

    private func pinnedRootsLocked(_ elsewhere: UInt64?, base: StoreSnapshot) -> PinnedRoots {
        var pinned = PinnedRoots(roots: Set(pins.keys))
        if let other = elsewhere { pinned.everythingFrom = TransactionID(other) }
        // Until a sync, a crash falls back to the synced state, so its head must stay readable.
        if slots.syncedTransaction < base.transaction { pinned.roots.insert(slots.syncedHead) }
        return pinned
    }

    /// Whether the next commit syncs: always in durable mode; in deferred mode every
    /// `checkpointInterval` commits, and sooner once the commits since the last sync wrote
    /// `checkpointByteLimit` bytes of pages (pages they released are reused only after a sync, so
    /// large deferred transactions would otherwise grow the file by up to `checkpointInterval` of
    /// them).
    var nextCommitSyncs: Bool {
        // Secure delete zeroes freed pages only once the commit freeing them is durable.
        options.durability == .durable
            || lock.withLock {
                published.state.secureDelete || slots.unsyncedCommitCount + 1 >= options.checkpointInterval
                    || slots.unsyncedPageCount >= max(options.checkpointByteLimit / pageSize, 1)
            }
    }

    /// The synced transaction a new state record names: recovery verifies every state after it.
    /// A durable commit names the state its group's slot will follow (see `GroupCommit`); a
    /// deferred-mode checkpoint first makes its predecessors durable, so it names its base.
    func syncedTransactionForCommit(base: TransactionID, syncs: Bool) -> TransactionID {
        if options.durability == .durable { return groupCommit.namedSyncedTransaction(base: base) }
        return syncs ? base : lock.withLock { slots.syncedTransaction }
    }

    /// Writes a built commit, makes it durable when it syncs, and publishes it.
    ///
    /// A syncing commit after unsynced ones (a deferred-mode checkpoint) syncs twice: once so the
    /// unsynced predecessors are durable, then after the header slot. Its state record names its
    /// base as synced, so recovery never needs the predecessors' pages, which later commits reuse.
    func publishCommit(_ transaction: WriteTransaction, pages: [PageBuffer], snapshot: StoreSnapshot, syncs: Bool) throws {
        defer { releaseWriter() }
        try pageFile.write(pages)
        try pageFile.extend(toPageCount: snapshot.state.pageCount)
        let (slotIndex, pendingSlot, predecessorsUnsynced) = lock.withLock {
            let (index, slot) = slots.nextSlot(for: snapshot.stateReference, syncs: syncs)
            return (index, slot, slots.syncedTransaction < transaction.base.transaction)
        }
        // A slot that will sync goes out marked "sync pending": no other process adopts it,
        // and it claims nothing durable, until the lock file records that its sync succeeded
        // (the slot is never rewritten in place: a torn rewrite could lose a synced slot).
        let slot = pendingSlot
        do {
            if syncs && predecessorsUnsynced { try pageFile.file.synchronize() }
            try writeSlot(slot, at: slotIndex)
            if syncs {
                try pageFile.file.synchronize()
                coordination?.recordSynced(sequence: slot.sequence)
            }
        } catch let error as IOError where error.operation == "fdatasync" {
            recordSyncFailure(error)
            throw StoreError.writesDisabledAfterSyncFailure(underlying: error)
        }
        for page in pages where page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue {
            pageFile.cache.insert(page)
        }
        lock.withLock {
            published = snapshot
            // Pages a large transaction spilled early count too: they were written as much as these.
            slots.recordWrite(
                slotIndex, slot: slot, snapshot: snapshot, synced: syncs, pageCount: pages.count + transaction.spilled.count)
        }
        coordination?.bumpChangeCounter()
        lock.withLock { seenChangeCounter = coordination?.changeCounter ?? 0 }
        try zeroReusablePages(after: transaction, snapshot: snapshot)
    }

    /// Releases the writer after an abort or a failed commit.
    func finishWrite() {
        releaseWriter()
    }

    /// Releases the gate, and the file's locks unless registered commits still need them.
    func releaseWriter() {
        groupCommit.releaseGate(writerGate, unlockFile: unlockFileWriter)
    }

    func unlockFileWriter() {
        coordination?.unlockWriter()
        fileLocks?.unlockWriter()
    }

    /// Latches this store read-only and tells every other process sharing it to do the same.
    func recordSyncFailure(_ error: IOError) {
        lock.withLock { failure = error }
        coordination?.recordSyncFailure()
        lock.withLock { seenSyncFailureCount = coordination?.syncFailureCount ?? 0 }
    }

    func writeSlot(_ slot: HeaderSlot, at index: Int) throws {
        // A buffer on the stack: an array took the runtime's type lookup (see `Array(byteCount:fill:)`).
        try withZeroedBytes(512) { raw in
            slot.encode(into: raw)
            do {
                try pageFile.file.write(UnsafeRawBufferPointer(raw), at: UInt64(HeaderSlot.offsets[index]))
            } catch let error as IOError {
                throw StoreError.io(error)
            }
        }
    }

    // MARK: - Durability and lifetime

    /// Makes every commit so far durable. A no-op when nothing is pending.
    ///
    /// Costs two syncs: one for the data, then one after marking the newest state verified in
    /// the other header slot, so recovery never walks back into states whose pages are reused.
    package func synchronize() throws {
        try withWriterHeld { try makePublishedDurable() }
    }

    /// Runs `body` holding the writer (this process's gate and the lock file), after adopting
    /// any newer commit of another process, so `body` never acts on a stale state.
    func withWriterHeld<Result>(_ body: () throws -> Result) throws -> Result {
        if isReadOnly { throw StoreError.readOnlyStore(path: path) }
        _ = try acquireWriter(waiting: true)
        defer { releaseWriter() }
        settleGroups()
        _ = try refreshForWriter(allowingSync: true)
        return try body()
    }

    /// After recovery (the opener holds the writer lock): make the chosen state durable and
    /// verified. The pages recovery checked are written again first: after a failed sync the
    /// OS cache can hold pages the disk never got, and a sync alone would not write them.
    func markRecoveredStateDurable(checkedPages: [PageReference]) throws {
        lock.withLock { slots.syncedTransaction = TransactionID.none }
        let pageCount = lock.withLock { published.state.pageCount }
        do {
            try Recovery.rewrite(checkedPages, pageFile: pageFile, pageCount: pageCount)
        } catch let error as StoreError {
            if case .io(let underlying) = error { lock.withLock { failure = underlying } }
            throw error
        }
        try makePublishedDurable()
    }

    /// With the writer held: sync pending commits and mark the newest state verified.
    func makePublishedDurable() throws {
        if let failure = lock.withLock({ failure }) { throw StoreError.writesDisabledAfterSyncFailure(underlying: failure) }
        let (pending, snapshot) = lock.withLock { (slots.syncedTransaction < published.transaction, published) }
        do {
            if pending {
                try pageFile.file.synchronize()
                let sequence = lock.withLock { slots.highestSequence }
                coordination?.recordSynced(sequence: sequence)
                lock.withLock { slots.markSynced(snapshot) }
            }
            guard let (index, slot) = lock.withLock({ slots.verificationMark(for: snapshot) }) else { return }
            try writeSlot(slot, at: index)
            try pageFile.file.synchronize()
            lock.withLock { slots.recordWrite(index, slot: slot, snapshot: snapshot, synced: true) }
            coordination?.bumpChangeCounter()
            lock.withLock { seenChangeCounter = coordination?.changeCounter ?? 0 }
        } catch let error as IOError {
            recordSyncFailure(error)
            throw StoreError.writesDisabledAfterSyncFailure(underlying: error)
        } catch let error as StoreError {
            if case .io(let underlying) = error { recordSyncFailure(underlying) }
            throw error
        }
    }

    /// Syncs pending commits, marks the newest state verified so the next open skips recovery,
    /// and closes the store. Later calls on the store throw ``StoreError/storeClosed``.
    package func close() throws {
        guard !(lock.withLock { isClosed }) else { return }
        defer {
            lock.withLock { isClosed = true }
            coordination?.releaseSlot()
            fileLocks?.markClosed()
        }
        guard (lock.withLock { failure }) == nil, !isReadOnly, !(lock.withLock { replaced }) else { return }
        try synchronize()
    }

    private func checkOpen() throws {
        if lock.withLock({ isClosed }) { throw StoreError.storeClosed }
    }

    // MARK: - Other processes' commits

    /// Re-reads the header when the lock file says another process committed (without a lock
    /// file, as in a read-only open beside none, on every call).
    func refreshIfChanged() throws {
        guard fileLocks != nil else { return }
        if lock.withLock({ replaced }) { throw StoreError.storeReplaced(path: path) }
        guard let coordination else {
            try refreshFromHeader()
            return
        }
        let counter = coordination.changeCounter
        guard counter != lock.withLock({ seenChangeCounter }) else { return }
        noticeSyncFailureElsewhere(coordination)
        // The store may have been replaced (a replacement bumps the counter): stop using it.
        if let identity, Platform.identity(atPath: resolvedPath) != identity {
            lock.withLock { replaced = true }
            throw StoreError.storeReplaced(path: path)
        }
        try refreshFromHeader()
        lock.withLock { seenChangeCounter = counter }
    }

    /// Another process's failed sync latches this store too: the kernel may have dropped its
    /// pages, which later commits would build on.
    private func noticeSyncFailureElsewhere(_ coordination: CoordinationFile) {
        let failures = coordination.syncFailureCount
        lock.withLock {
            guard failures != seenSyncFailureCount else { return }
            seenSyncFailureCount = failures
            if failure == nil { failure = IOError(operation: "fdatasync", path: path, code: Platform.ioFailure) }
        }
    }

    /// With the writer lock held: adopt the newest committed state (the header is read every
    /// time: a process that reached the store by another name bumps another lock file's counter),
    /// and sync once if it came from a process that left it unsynced, so the slot rule (write
    /// the slot not holding it) is safe.
    /// - Parameter allowingSync: false to stop, returning false, where a sync (or recovery of
    ///   an abandoned commit) would come next; what was adopted so far stays adopted.
    /// - Returns: whether the refresh is complete.
    private func refreshForWriter(allowingSync: Bool) throws -> Bool {
        guard fileLocks != nil else { return true }
        if let coordination { noticeSyncFailureElsewhere(coordination) }
        if let failure = lock.withLock({ failure }) { throw StoreError.writesDisabledAfterSyncFailure(underlying: failure) }
        let counter = coordination?.changeCounter ?? 0
        guard try refreshFromHeader(holdingWriter: true, mayRecover: allowingSync) else { return false }
        lock.withLock { seenChangeCounter = counter }
        if lock.withLock({ slots.newestMayBeUnsynced }) {
            guard allowingSync else { return false }
            lock.withLock { slots.syncedTransaction = TransactionID.none }
            try makePublishedDurable()
        }
        return true
    }

    /// Adopts what other processes wrote to the header: a newer state, or only newer slot
    /// sequence numbers (a verified mark), so this process never reuses a sequence number.
    ///
    /// A slot whose sync is pending is skipped: its commit is not acknowledged yet and may fail.
    /// With the writer held, a pending newest slot can only be left by a writer that died or
    /// whose sync failed: recovery checks that state, writes its pages again and syncs.
    /// - Parameter mayRecover: false to return false instead of recovering an abandoned commit
    ///   (recovery syncs).
    /// - Returns: false only when recovery was needed and not allowed.
    @discardableResult
    private func refreshFromHeader(holdingWriter: Bool = false, mayRecover: Bool = true) throws -> Bool {
        var header = try Recovery.readHeaderSlots(pageFile)
        let synced = syncedSequence
        if let newest = header.max(by: { $0.slot.sequence < $1.slot.sequence }), !newest.slot.isSynced(upTo: synced) {
            if holdingWriter && newest.slot.sequence > lock.withLock({ slots.highestSequence }) {
                guard mayRecover else { return false }
                try recoverAbandonedCommit()
                return true
            }
            header = Recovery.withoutUnfinishedNewest(header, syncedSequence: synced)
        }
        guard let newest = header.max(by: { $0.slot.sequence < $1.slot.sequence }) else { return true }
        let (current, highest) = lock.withLock { (published, slots.highestSequence) }
        guard newest.slot.sequence > highest else { return true }
        var snapshot = current
        if newest.slot.state.birth > current.transaction {
            let reader = SnapshotReader(pageFile: pageFile, pageCount: UInt64.max)
            do {
                snapshot = try Recovery.loadSnapshot(newest.slot.state, reader: reader)
            } catch let error as StoreError where error.isDamage && !holdingWriter {
                // Unpinned, the state can be freed and reused by later commits before it is read;
                // then a newer slot exists: read the header again.
                let newestNow = try Recovery.readHeaderSlots(pageFile).map(\.slot.sequence).max() ?? 0
                guard newestNow > newest.slot.sequence else { throw error }
                return try refreshFromHeader()
            }
        } else if newest.slot.state != current.stateReference {
            return true  // a torn or older view; the next change will be noticed again
        }
        // Another process may have cut the file (compaction): ask for its size again.
        pageFile.forgetByteCount()
        lock.withLock {
            guard newest.slot.sequence > slots.highestSequence else { return }
            if snapshot.transaction > published.transaction { published = snapshot }
            slots.adopt(header, snapshot: published, syncedSequence: synced)
        }
        return true
    }

    /// With the writer held, the newest slot is still "sync pending": its writer died before
    /// its sync finished, or its sync failed. Run recovery as an opener would and make the
    /// outcome durable (pages rewritten first), so nothing builds on pages the disk may lack.
    private func recoverAbandonedCommit() throws {
        let outcome = try Recovery.recover(pageFile, path: path, syncedSequence: syncedSequence, holdsWriter: true)
        pageFile.forgetByteCount()
        lock.withLock {
            published = outcome.snapshot
            slots = outcome.slots
        }
        try markRecoveredStateDurable(checkedPages: outcome.checkedPageList)
    }
}
