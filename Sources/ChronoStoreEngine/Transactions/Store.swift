// An open store: the published state, readers' pins, the writer, and publishing commits.

/// An open ChronoStore data file.
///
/// `@unchecked Sendable`: mutable fields are guarded by `lock`; one writer at a time is admitted
/// by `writerGate` (threads of this process) and the lock file (other processes).
package final class Store: @unchecked Sendable {
    package let path: String
    package let pageFile: PageFile
    package let options: StoreOptions
    package let preamble: FilePreamble
    let coordination: CoordinationFile?
    let writerGate = WriterGate()
    /// What pruning remembers between commits (only the writer uses it).
    let pruningMemory = PruningMemory()

    let lock = Lock()
    // Guarded by `lock`:
    private(set) var published: StoreSnapshot
    var pins: [TransactionID: Int] = [:]
    private var failure: IOError?
    private var isClosed = false
    private var slots: SlotBook
    private var seenChangeCounter: UInt64 = 0
    /// The highest transaction id this process has handed out.
    private var transactionFloor = TransactionID.none

    init(path: String, file: any StoreFile, preamble: FilePreamble, options: StoreOptions,
         coordination: CoordinationFile?, recovered: Recovery.Outcome) {
        self.path = path
        self.preamble = preamble
        self.options = options
        self.coordination = coordination
        let pageCapacity = max(16, options.cacheByteCount / preamble.pageSize)
        self.pageFile = PageFile(file: file, pageSize: preamble.pageSize, cache: PageCache(pageCapacity: pageCapacity))
        self.published = recovered.snapshot
        self.slots = recovered.slots
        self.seenChangeCounter = coordination?.changeCounter ?? 0
    }

    package var pageSize: Int { preamble.pageSize }

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
            let snapshot = lock.withLock { () -> StoreSnapshot in
                pins[published.head.transaction, default: 0] += 1
                advertiseLocked()
                return published
            }
            // Another process may have committed between the refresh and the advertisement;
            // then start again so the pin is on the newest head.
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
            if let count = pins[root] {
                if count <= 1 { pins.removeValue(forKey: root) } else { pins[root] = count - 1 }
            }
            advertiseLocked()
        }
    }

    func advertiseLocked() {
        coordination?.advertiseOldestRead(pins.keys.min()?.rawValue ?? 0)
    }

    // MARK: - The writer

    /// Starts the write transaction, waiting for any other writer (thread or process) to finish.
    /// - Throws: ``StoreError/writesDisabledAfterSyncFailure(underlying:)`` after a failed sync.
    package func beginWrite() throws -> WriteTransaction {
        try checkOpen()
        writerGate.acquire()
        do {
            try coordination?.lockWriter()
        } catch {
            writerGate.release()
            throw StoreError.io(error as? IOError ?? IOError(operation: "flock", path: path, code: 0))
        }
        do {
            try checkOpen()
            try refreshForWriter()
            let (snapshot, horizon, pinned, id) = try lock.withLock {
                () throws -> (StoreSnapshot, TransactionID, PinnedRoots, TransactionID) in
                if let failure { throw StoreError.writesDisabledAfterSyncFailure(underlying: failure) }
                return (published, horizonLocked(), pinnedRootsLocked(), reserveTransactionLocked())
            }
            return WriteTransaction(store: self, base: snapshot, transaction: id, horizon: horizon, pinnedRoots: pinned)
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
    private func reserveTransactionLocked() -> TransactionID {
        var id = max(published.transaction, transactionFloor)
        if let shared = coordination?.transactionFloor { id = max(id, TransactionID(shared)) }
        id = id.next
        transactionFloor = id
        coordination?.raiseTransactionFloor(id.rawValue)
        return id
    }

    /// After recovery from a crash: skip past every id the lost commits can have used. Commits
    /// lost to power failure are at most the unsynced ones, fewer than `maximumCheckpointInterval`.
    func skipIdsLostInCrash() {
        lock.withLock { transactionFloor = max(transactionFloor, TransactionID(published.transaction.rawValue + Self.lostIdGap)) }
    }

    /// How far ids jump after crash recovery.
    static let lostIdGap: UInt64 = 1 << 16

    /// Pages released at or before this transaction may be reused: it is durable, and no reader
    /// in any process reads an older root.
    private func horizonLocked() -> TransactionID {
        var horizon = slots.syncedTransaction
        if let oldest = pins.keys.min() { horizon = min(horizon, oldest) }
        if let other = coordination?.oldestReadByOtherProcesses() { horizon = min(horizon, TransactionID(other)) }
        return horizon
    }

    private func pinnedRootsLocked() -> PinnedRoots {
        var pinned = PinnedRoots(roots: Set(pins.keys))
        if let other = coordination?.oldestReadByOtherProcesses() { pinned.everythingFrom = TransactionID(other) }
        // Until a sync, a crash falls back to the synced state, so its head must stay readable.
        if slots.syncedTransaction < published.transaction { pinned.roots.insert(slots.syncedHead) }
        return pinned
    }

    /// Whether the next commit syncs: always in durable mode, every `checkpointInterval`
    /// commits in deferred mode.
    var nextCommitSyncs: Bool {
        options.durability == .durable || lock.withLock { slots.unsyncedCommitCount + 1 >= options.checkpointInterval }
    }

    /// The synced transaction a new state record names: recovery verifies every state after it.
    /// A syncing commit first makes its predecessors durable, so it names its base.
    func syncedTransactionForCommit(base: TransactionID, syncs: Bool) -> TransactionID {
        syncs ? base : lock.withLock { slots.syncedTransaction }
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
        let (slotIndex, slot, predecessorsUnsynced) = lock.withLock {
            let (index, slot) = slots.nextSlot(for: snapshot.stateReference, durable: syncs)
            return (index, slot, slots.syncedTransaction < transaction.base.transaction)
        }
        do {
            if syncs && predecessorsUnsynced { try pageFile.file.synchronize() }
            try writeSlot(slot, at: slotIndex)
            if syncs { try pageFile.file.synchronize() }
        } catch let error as IOError where error.operation == "fdatasync" {
            lock.withLock { failure = error }
            throw StoreError.writesDisabledAfterSyncFailure(underlying: error)
        }
        for page in pages where page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue {
            pageFile.cache.insert(page)
        }
        lock.withLock {
            published = snapshot
            slots.recordWrite(slotIndex, slot: slot, snapshot: snapshot, synced: syncs)
        }
        coordination?.bumpChangeCounter()
        lock.withLock { seenChangeCounter = coordination?.changeCounter ?? 0 }
    }

    /// Releases the writer after an abort or a failed commit.
    func finishWrite() {
        releaseWriter()
    }

    private func releaseWriter() {
        coordination?.unlockWriter()
        writerGate.release()
    }

    func writeSlot(_ slot: HeaderSlot, at index: Int) throws {
        var bytes = [UInt8](repeating: 0, count: 512)
        bytes.withUnsafeMutableBytes { slot.encode(into: $0) }
        do {
            try bytes.withUnsafeBytes { try pageFile.file.write($0, at: UInt64(HeaderSlot.offsets[index])) }
        } catch let error as IOError {
            throw StoreError.io(error)
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
        writerGate.acquire()
        defer { writerGate.release() }
        do { try coordination?.lockWriter() } catch let error as IOError { throw StoreError.io(error) }
        defer { coordination?.unlockWriter() }
        try refreshForWriter()
        return try body()
    }

    /// After recovery (the opener holds the writer lock): make the chosen state durable and verified.
    func markRecoveredStateDurable() throws {
        lock.withLock { slots.syncedTransaction = TransactionID.none }
        try makePublishedDurable()
    }

    /// With the writer held: sync pending commits and mark the newest state verified.
    func makePublishedDurable() throws {
        if let failure = lock.withLock({ failure }) { throw StoreError.writesDisabledAfterSyncFailure(underlying: failure) }
        let (pending, snapshot) = lock.withLock { (slots.syncedTransaction < published.transaction, published) }
        do {
            if pending {
                try pageFile.file.synchronize()
                lock.withLock { slots.markSynced(snapshot) }
            }
            guard let (index, slot) = lock.withLock({ slots.verificationMark(for: snapshot) }) else { return }
            try writeSlot(slot, at: index)
            try pageFile.file.synchronize()
            lock.withLock { slots.recordWrite(index, slot: slot, snapshot: snapshot, synced: true) }
            coordination?.bumpChangeCounter()
            lock.withLock { seenChangeCounter = coordination?.changeCounter ?? 0 }
        } catch let error as IOError {
            lock.withLock { failure = error }
            throw StoreError.writesDisabledAfterSyncFailure(underlying: error)
        } catch let error as StoreError {
            if case .io(let underlying) = error { lock.withLock { failure = underlying } }
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
        }
        guard (lock.withLock { failure }) == nil else { return }
        try synchronize()
    }

    private func checkOpen() throws {
        if lock.withLock({ isClosed }) { throw StoreError.storeClosed }
    }

    // MARK: - Other processes' commits

    /// Re-reads the header when the lock file says another process committed.
    func refreshIfChanged() throws {
        guard let coordination else { return }
        let counter = coordination.changeCounter
        guard counter != lock.withLock({ seenChangeCounter }) else { return }
        try refreshFromHeader()
        lock.withLock { seenChangeCounter = counter }
    }

    /// With the writer lock held: adopt the newest committed state, and sync once if it came from
    /// a process that left it unsynced, so the slot rule (write the slot not holding it) is safe.
    private func refreshForWriter() throws {
        guard coordination != nil else { return }
        try refreshIfChanged()
        if lock.withLock({ slots.newestMayBeUnsynced }) {
            lock.withLock { slots.syncedTransaction = TransactionID.none }
            try makePublishedDurable()
        }
    }

    /// Adopts what other processes wrote to the header: a newer state, or only newer slot
    /// sequence numbers (a verified mark), so this process never reuses a sequence number.
    private func refreshFromHeader() throws {
        let header = try Recovery.readHeaderSlots(pageFile)
        guard let newest = header.max(by: { $0.slot.sequence < $1.slot.sequence }) else { return }
        let (current, highest) = lock.withLock { (published, slots.highestSequence) }
        guard newest.slot.sequence > highest else { return }
        var snapshot = current
        if newest.slot.state.birth > current.transaction {
            let reader = SnapshotReader(pageFile: pageFile, pageCount: UInt64.max)
            snapshot = try Recovery.loadSnapshot(newest.slot.state, reader: reader)
        } else if newest.slot.state != current.stateReference {
            return  // a torn or older view; the next change will be noticed again
        }
        // Another process may have cut the file (compaction): ask for its size again.
        pageFile.forgetByteCount()
        lock.withLock {
            guard newest.slot.sequence > slots.highestSequence else { return }
            if snapshot.transaction > published.transaction { published = snapshot }
            slots.adopt(header, snapshot: published)
        }
    }
}
