// Which header slot to write next, and what is known durable.

/// Bookkeeping for the two header slots.
///
/// Rule: a commit writes the slot that does not hold the newest synced state, so a crash before
/// the sync leaves that state intact. In durable mode the slots alternate; in deferred mode
/// every commit rewrites the same unsynced slot until a sync makes it the durable one.
struct SlotBook {
    /// The slot holding the newest synced state.
    var durableSlot: Int
    /// The highest sequence number in either slot.
    var highestSequence: UInt64
    /// Whether the durable slot is marked verified.
    var durableSlotVerified: Bool
    /// The slot written last (it holds the published state).
    var lastWrittenSlot: Int
    var syncedTransaction: TransactionID
    /// The head root of the synced state (kept readable until the next sync).
    var syncedHead: TransactionID
    /// Pages released after this transaction may not be reused yet: the durable slot names the
    /// end of a commit group, and recovery of it checks the group's commits from this one on
    /// (nil: no such limit; see `GroupCommit`).
    var reuseLimit: TransactionID?
    var unsyncedCommitCount = 0
    /// Pages the commits since the last sync wrote (what a deferred-mode checkpoint waits for).
    var unsyncedPageCount = 0
    /// The newest state came from another process that did not sync it.
    var newestMayBeUnsynced = false

    init(chosenSlot: Int, slot: HeaderSlot, highestSequence: UInt64, snapshot: StoreSnapshot) {
        durableSlot = chosenSlot
        lastWrittenSlot = chosenSlot
        self.highestSequence = highestSequence
        durableSlotVerified = slot.isVerified
        syncedTransaction = snapshot.transaction
        syncedHead = snapshot.head.transaction
    }

    /// The slot and contents for a new state. A commit that will sync goes out "sync pending"
    /// and becomes durable only when rewritten after its sync succeeded.
    func nextSlot(for state: PageReference, syncs: Bool) -> (Int, HeaderSlot) {
        (1 - durableSlot,
         HeaderSlot(sequence: highestSequence + 1, state: state, isVerified: false, isDurable: false, isSyncPending: syncs))
    }

    mutating func recordWrite(_ index: Int, slot: HeaderSlot, snapshot: StoreSnapshot, synced: Bool, pageCount: Int = 0) {
        highestSequence = max(highestSequence, slot.sequence)
        lastWrittenSlot = index
        newestMayBeUnsynced = false
        if synced {
            reuseLimit = nil
            durableSlot = index
            durableSlotVerified = slot.isVerified
            syncedTransaction = snapshot.transaction
            syncedHead = snapshot.head.transaction
            unsyncedCommitCount = 0
            unsyncedPageCount = 0
        } else {
            unsyncedCommitCount += 1
            unsyncedPageCount += pageCount
        }
    }

    /// After a sync: the last written slot now holds a durable state.
    mutating func markSynced(_ snapshot: StoreSnapshot) {
        reuseLimit = nil
        if syncedTransaction < snapshot.transaction {
            durableSlot = lastWrittenSlot
            durableSlotVerified = false
        }
        syncedTransaction = snapshot.transaction
        syncedHead = snapshot.head.transaction
        unsyncedCommitCount = 0
        unsyncedPageCount = 0
        newestMayBeUnsynced = false
    }

    /// The slot write that marks the published, synced state verified, if it is not yet.
    func verificationMark(for snapshot: StoreSnapshot) -> (Int, HeaderSlot)? {
        guard syncedTransaction == snapshot.transaction, !durableSlotVerified else { return nil }
        return (1 - durableSlot,
                HeaderSlot(sequence: highestSequence + 1, state: snapshot.stateReference, isVerified: true, isDurable: true))
    }

    /// Takes over what another process wrote.
    mutating func adopt(_ header: [(index: Int, slot: HeaderSlot)], snapshot: StoreSnapshot, syncedSequence: UInt64) {
        guard let newest = header.max(by: { $0.slot.sequence < $1.slot.sequence }) else { return }
        highestSequence = max(highestSequence, newest.slot.sequence)
        lastWrittenSlot = newest.index
        unsyncedCommitCount = 0
        unsyncedPageCount = 0
        reuseLimit = nil
        if newest.slot.isDurable || newest.slot.isVerified || (newest.slot.isSyncPending && newest.slot.sequence <= syncedSequence) {
            durableSlot = newest.index
            durableSlotVerified = newest.slot.isVerified
            syncedTransaction = snapshot.transaction
            syncedHead = snapshot.head.transaction
            newestMayBeUnsynced = false
        } else {
            newestMayBeUnsynced = true
        }
    }
}
