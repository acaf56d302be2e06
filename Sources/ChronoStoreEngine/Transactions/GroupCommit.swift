// Group commit: durable commits that writers of one process write in turn share one header slot and one sync.

/// A durable commit whose pages are written and whose sync is still to come.
package struct CommitTicket: Sendable {
    /// Position in this process's order of written commits (1, 2, ...).
    let number: UInt64
    /// The head the commit makes.
    package let head: TransactionID
}

/// The durable commits this process has written but not yet acknowledged, and who syncs them.
///
/// A durable commit is built and its pages staged (``StagedPages``) while its writer holds the
/// in-process ``WriterGate``, but its page writes, header slot and sync come later: it *registers*
/// here, releases the gate (the process keeps the data file's writer lock) and waits. The next
/// writer of this process builds on it at once. One waiter at a time becomes the *leader*: it takes
/// every commit registered so far as one *group*, writes their pages and one header slot naming
/// the newest, syncs once,
/// and acknowledges them all; waiters whose commit a finished group covers return, the others
/// wait for the next group, whose leader one of them becomes.
///
/// Every member of a group names as its synced transaction the end of the group before it (the
/// `floor`), which is synced before the group's slot is written; so recovery of a group's slot
/// checks the pages born in the group that its end reaches (see "Group commit" in Durability.md).
///
/// The process keeps the data file's writer lock while any commit is registered and not yet
/// settled: another process must not build on states that are in no header slot yet.
///
/// `@unchecked Sendable`: every stored property is guarded by `mutex`.
final class GroupCommit: @unchecked Sendable {
    /// Commits a leader makes durable with one slot and one sync.
    struct Group {
        /// The newest commit of the group: the state its header slot names.
        let end: StoreSnapshot
        /// The oldest commit of the group: recovery of `end` checks the commits from it onwards.
        let firstMember: TransactionID
    }

    /// Conditions 0 and 1 wake the waiters of one group each (see ``groupCondition(_:)``);
    /// `namedCondition` wakes a leader waiting for a naming writer to register. Kept apart so
    /// that neither a registration (one a commit) nor a settled group wakes committers it does not
    /// concern: in a virtual machine each needless wake-up cost several microseconds of system
    /// time, and they made group commit CPU-bound.
    private let mutex = ConditionLock(conditionCount: 3)
    private static let namedCondition = 2
    /// The newest registered commit not yet settled (the base for the next writer).
    private var written: StoreSnapshot?
    private var issued: UInt64 = 0
    /// Tickets up to this number are settled: acknowledged, or failed.
    private var settled: UInt64 = 0
    /// Ranges of tickets that failed, and why (a few at most: a failure usually latches the store).
    private var failures: [(range: ClosedRange<UInt64>, error: any Error)] = []
    /// Bumped by a failure: a writer that began before it built on a failed commit.
    private var epoch: UInt64 = 0
    /// The state the members of the next group name as synced: the newest state in a written slot.
    private var floor = TransactionID.none
    private var nextFirstMember: TransactionID?
    private var leading = false
    /// Groups taken by leaders so far; the tickets registered since form group `groupsTaken`
    /// (the *open* group), the tickets up to `takenThrough` the groups before it.
    private var groupsTaken: UInt64 = 0
    private var takenThrough: UInt64 = 0
    /// A writer has chosen its synced transaction and not yet registered: a leader waits for it.
    private var naming = false
    /// This process holds the data file's writer lock on behalf of registered commits.
    private var holdsFileWriter = false
    /// Waiters that block no thread (the typed API's tasks), told the outcome once their ticket
    /// settles (see ``notifyWhenSettled(_:notify:)``).
    private var notifications: [(number: UInt64, notify: @Sendable (Result<Void, any Error>) -> Void)] = []
    /// A relay is leading groups on behalf of those waiters (see ``relay(gate:unlockFile:sync:)``).
    private var relaying = false

    private var pendingCount: UInt64 { issued - settled }

    /// Registered commits not yet settled (tests wait on it).
    var registeredCount: UInt64 { mutex.withLock { pendingCount } }

    /// The condition the waiters of group `group` wait on. Groups settle in order and one at a
    /// time, so at most two have waiters: the one a leader is syncing and the open one. A settled
    /// group wakes its own members (all acknowledged) and one member of the open group (to lead
    /// it), not the open group's other members.
    private static func groupCondition(_ group: UInt64) -> Int { Int(group % 2) }

    /// With `mutex` held: wakes the waiters of both groups (a failure, or no commit left to lead).
    private func wakeEveryGroup() {
        mutex.broadcast(Self.groupCondition(0))
        mutex.broadcast(Self.groupCondition(1))
    }

    /// With `mutex` held: the group that holds ticket `number` (not yet settled).
    private func group(of number: UInt64) -> UInt64 { number > takenThrough ? groupsTaken : groupsTaken - 1 }

    // MARK: - The writer holding the gate

    /// With the gate held: whether the process must still take the data file's writer lock (it
    /// does not while registered commits keep it). Records that it will hold it.
    func takeFileWriter() -> Bool {
        mutex.withLock {
            if holdsFileWriter { return false }
            holdsFileWriter = true
            return true
        }
    }

    /// Taking the data file's writer lock failed after ``takeFileWriter()`` said to take it.
    func fileWriterNotTaken() {
        mutex.withLock { holdsFileWriter = false }
    }

    /// With the gate held: the state a new writer builds on, the epoch it builds in, and whether
    /// no registered commit awaits its group's sync (pages still staged then belong to commits
    /// that failed, and nothing builds on them any more).
    func base(published: StoreSnapshot) -> (StoreSnapshot, UInt64, nothingPending: Bool) {
        mutex.withLock { (written ?? published, epoch, pendingCount == 0) }
    }

    /// The failure of the group a writer that began in `writerEpoch` built on, if one failed
    /// since: its reads of that group's pages (dropped from the stage, maybe never written) then
    /// report the group's error rather than damage.
    func failure(since writerEpoch: UInt64) -> (any Error)? {
        mutex.withLock { writerEpoch == epoch ? nil : (failures.last?.error ?? StoreError.transactionFailed) }
    }

    /// The synced transaction a durable commit on `base` names: its base when nothing is pending
    /// (the base is then synced), else the end of the newest group that has a slot.
    func namedSyncedTransaction(base: TransactionID) -> TransactionID {
        mutex.withLock {
            naming = true
            if pendingCount == 0 { floor = base }
            return floor
        }
    }

    /// The writer that named a synced transaction will not register (its commit failed).
    func cancelNaming() {
        mutex.withLock {
            guard naming else { return }
            naming = false
            mutex.signal(Self.namedCondition)
        }
    }

    /// Records a commit whose pages are written; the caller then releases the gate and waits.
    /// - Throws: the failure of an earlier group this commit built on.
    func register(_ snapshot: StoreSnapshot, epoch writerEpoch: UInt64) throws -> CommitTicket {
        try mutex.withLock {
            naming = false
            mutex.signal(Self.namedCondition)
            guard writerEpoch == epoch else {
                throw failures.last?.error ?? StoreError.transactionFailed
            }
            issued += 1
            written = snapshot
            if nextFirstMember == nil { nextFirstMember = snapshot.transaction }
            return CommitTicket(number: issued, head: snapshot.head.transaction)
        }
    }

    /// Releases the gate; the data file's writer lock too (through `unlockFile`) when nothing
    /// registered needs it any more.
    func releaseGate(_ gate: WriterGate, unlockFile: () -> Void) {
        mutex.withLock {
            if pendingCount == 0 && holdsFileWriter {
                unlockFile()
                holdsFileWriter = false
            }
            gate.release()
        }
    }

    // MARK: - Waiting, and leading a group

    /// Returns once the group holding `ticket` is durable and acknowledged; leads groups as needed.
    ///
    /// A commit that need not be durable soon (a packing commit) passes a `delay`: while it is the
    /// only commit of the open group and `delay` nanoseconds have not passed, it waits for a later
    /// commit's writer to lead the group instead of leading it itself, so that the two share one
    /// sync. Afterwards, or once another commit is in its group (whose writer may be waiting for
    /// the signal this one took), it leads as any waiter does.
    /// - Parameters:
    ///   - delay: how long to wait for a later commit to lead (0: lead when no one else does).
    ///   - sync: writes a group's slot and syncs it (called without any lock held).
    ///   - gate, unlockFile: to release the data file's writer lock once nothing is pending.
    /// - Throws: what the sync of the ticket's group threw.
    func waitForSync(
        _ ticket: CommitTicket, joiningWithin delay: UInt64 = 0, gate: WriterGate, unlockFile: () -> Void,
        sync: (Group) throws -> Void
    ) throws {
        let deadline = delay == 0 ? 0 : ConditionLock.monotonicNanoseconds() &+ delay
        mutex.lock()
        defer { mutex.unlock() }
        while ticket.number > settled {
            if leading {
                mutex.wait(Self.groupCondition(group(of: ticket.number)))
                continue
            }
            if deadline > 0, ticket.number == takenThrough + 1, issued == ticket.number {
                let now = ConditionLock.monotonicNanoseconds()
                if now < deadline {
                    mutex.wait(Self.groupCondition(group(of: ticket.number)), timeoutNanoseconds: deadline - now)
                    continue
                }
            }
            lead(gate: gate, unlockFile: unlockFile, sync: sync)
        }
        try throwFailure(of: ticket)
    }

    /// With `mutex` held and `ticket` settled: throws what failed its group, if it failed.
    private func throwFailure(of ticket: CommitTicket) throws {
        if let failed = failures.last(where: { $0.range.contains(ticket.number) }) { throw failed.error }
    }

    /// Settles `ticket` at once if nothing else is in flight: returns true when it was settled
    /// already (a deferred-mode ticket, or one a group covered), or when it is the only commit not
    /// yet settled and no leader is syncing, in which case this call leads its group (just this
    /// commit, and any registered meanwhile) and returns once it is durable. Returns false, doing
    /// nothing, when the commit would have to wait for another leader or share its group with
    /// commits other writers are waiting on: the caller then waits with ``waitForSync(_:joiningWithin:gate:unlockFile:sync:)``
    /// where waiting costs no one.
    /// - Throws: what the sync of the ticket's group threw.
    func settleIfAlone(_ ticket: CommitTicket, gate: WriterGate, unlockFile: () -> Void, sync: (Group) throws -> Void) throws -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        if ticket.number > settled {
            guard !leading, !naming, issued == ticket.number, settled == ticket.number - 1 else { return false }
            // The group it takes holds every registered commit, this one included, and settles
            // them all whether the sync succeeds or fails.
            lead(gate: gate, unlockFile: unlockFile, sync: sync)
        }
        try throwFailure(of: ticket)
        return true
    }

    /// Tells `notify` the outcome of `ticket` once it settles, without blocking the calling
    /// thread: at once, on this thread, when it has settled already; otherwise from the thread
    /// that settles it, with the group lock held (so `notify` must only hand the outcome on, as
    /// resuming a continuation does). Returns true when the caller must start a relay
    /// (``relay(gate:unlockFile:sync:)`` on a thread of its own): none is running, and a waiter that
    /// blocks no thread leads no group.
    func notifyWhenSettled(_ ticket: CommitTicket, notify: @escaping @Sendable (Result<Void, any Error>) -> Void) -> Bool {
        mutex.lock()
        guard ticket.number > settled else {
            let outcome = Result { try throwFailure(of: ticket) }
            mutex.unlock()
            notify(outcome)
            return false
        }
        defer { mutex.unlock() }
        notifications.append((ticket.number, notify))
        guard !relaying else { return false }
        relaying = true
        return true
    }

    /// Leads groups, one after another, for as long as a waiter that blocks no thread has a
    /// ticket not yet settled; waits while another leader syncs. The thread it runs on is the
    /// only one such waiters cost: each commit's wait is a callback, not a blocked thread (a
    /// thread a waiter, each woken by every settled group, made eight typed tasks at once
    /// CPU-bound; Docs/Performance.md).
    ///
    /// Leading the next group as soon as one is synced keeps one sync in flight while the
    /// waiters' tasks build their next commits, which join the group after it.
    func relay(gate: WriterGate, unlockFile: () -> Void, sync: (Group) throws -> Void) {
        mutex.lock()
        defer { mutex.unlock() }
        while true {
            guard !notifications.isEmpty, pendingCount > 0 else {
                relaying = false
                return
            }
            if leading {
                mutex.wait(Self.groupCondition(group(of: issued)))
                continue
            }
            lead(gate: gate, unlockFile: unlockFile, sync: sync)
        }
    }

    /// With `mutex` held: tells the waiters whose tickets have settled their outcome.
    private func deliverNotifications() {
        guard notifications.contains(where: { $0.number <= settled }) else { return }
        let due = notifications.filter { $0.number <= settled }
        notifications.removeAll { $0.number <= settled }
        for waiter in due {
            waiter.notify(Result { try throwFailure(of: CommitTicket(number: waiter.number, head: .none)) })
        }
    }

    /// With `mutex` held and no leader: takes every registered commit as one group and syncs it.
    private func lead(gate: WriterGate, unlockFile: () -> Void, sync: (Group) throws -> Void) {
        leading = true
        // A writer that named this group's floor is about to register: it belongs in this group.
        while naming { mutex.wait(Self.namedCondition) }
        guard let end = written, let first = nextFirstMember else {
            leading = false
            wakeEveryGroup()
            return
        }
        let through = issued
        let group = groupsTaken
        groupsTaken += 1
        takenThrough = through
        nextFirstMember = nil
        floor = end.transaction
        mutex.unlock()
        let outcome = Result { try sync(Group(end: end, firstMember: first)) }
        mutex.lock()
        leading = false
        switch outcome {
        case .success:
            settled = through
            if issued == through { written = nil }
            // This group's members return; one member of the open group, if it has any waiting,
            // leads it (the others sleep on until it settles).
            mutex.broadcast(Self.groupCondition(group))
            if pendingCount > 0 { mutex.signal(Self.groupCondition(group + 1)) }
        case .failure(let error):
            // Every registered commit built on this group: all fail, as does a writer building now.
            if issued > settled { failures.append((settled + 1...issued, error)) }
            settled = issued
            written = nil
            nextFirstMember = nil
            epoch += 1
            wakeEveryGroup()
        }
        deliverNotifications()
        if pendingCount == 0 && holdsFileWriter && gate.tryAcquire() {
            unlockFile()
            holdsFileWriter = false
            gate.release()
        }
    }

    /// Settles every registered commit (leading as needed) before the caller, holding the gate,
    /// acts on the published state: `synchronize()`, `close()`, compaction's truncation.
    func settleAll(gate: WriterGate, unlockFile: () -> Void, sync: (Group) throws -> Void) {
        let last = mutex.withLock { issued > settled ? CommitTicket(number: issued, head: .none) : nil }
        guard let last else { return }
        try? waitForSync(last, gate: gate, unlockFile: unlockFile, sync: sync)
    }
}
