// Durable commits in groups: register a written commit, wait for the sync covering it, lead a group's sync.

import Dispatch

extension Store {
    /// Stages a built durable commit's pages and registers it for the next group's sync, then
    /// releases the gate (the process keeps the file's writer lock until the group is synced).
    /// The next writer of this process builds on this commit at once, reading its pages from the
    /// stage; the group's leader writes them (see ``PageFile/writeStaged(through:)``).
    ///
    /// A commit that left a packing batch due (``WriteTransaction/leavesPackingDue``) hands the
    /// gate to a packing commit instead of releasing it (see ``startPackingCommit()``).
    func writeGroupMember(_ transaction: WriteTransaction, pages: [PageBuffer], snapshot: StoreSnapshot) throws -> CommitTicket {
        var handsGateToPacking = false
        defer { if !handsGateToPacking { releaseWriter() } }
        do {
            // Staged before registering: a leader may take the group as soon as it is registered.
            pageFile.staged.stage(
                pages, released: transaction.allocator.released, by: transaction.transaction, spilled: transaction.hasSpilled)
            try pageFile.extend(toPageCount: snapshot.state.pageCount)
        } catch {
            pageFile.staged.remove(pages, of: transaction.transaction)
            groupCommit.cancelNaming()
            pruningMemory.forget()
            throw error
        }
        // Readers never ask for these births before the group is published (page ids of commits
        // that fail are never used again), so caching them now is safe.
        for page in pages where page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue {
            pageFile.cache.insert(page)
        }
        do {
            let ticket = try groupCommit.register(snapshot, epoch: transaction.groupEpoch)
            if transaction.leavesPackingDue {
                handsGateToPacking = true
                startPackingCommit()
            }
            return ticket
        } catch {
            pageFile.staged.remove(pages, of: transaction.transaction)
            pruningMemory.forget()
            throw error
        }
    }

    /// Returns once the commit of `ticket` is durable and published, leading a group's sync when
    /// no other waiter is. A deferred-mode ticket (number 0) is published already.
    /// - Throws: ``StoreError/writesDisabledAfterSyncFailure(underlying:)`` when the group's sync
    ///   failed, or the I/O error that failed its header slot; the commit is then not made.
    package func awaitDurable(_ ticket: CommitTicket) throws {
        try groupCommit.waitForSync(ticket, gate: writerGate, unlockFile: unlockFileWriter, sync: syncGroup)
    }

    /// Makes the commit of `ticket` durable on the calling thread if no other commit of this
    /// process is in flight: returns true once it is durable and published (at once for a ticket
    /// already settled, such as a deferred-mode one), having led its group's sync when it is the
    /// only commit not yet settled and no leader is syncing. Returns false, having done nothing,
    /// when other commits are in flight; the caller then waits with ``awaitDurable(_:)``, from a
    /// thread where waiting for another writer's sync costs no one. A lone commit therefore
    /// costs one sync and no thread hop (the typed API's transactions use this).
    /// - Throws: as ``awaitDurable(_:)``.
    package func awaitDurableIfAlone(_ ticket: CommitTicket) throws -> Bool {
        try groupCommit.settleIfAlone(ticket, gate: writerGate, unlockFile: unlockFileWriter, sync: syncGroup)
    }

    /// Calls `notify` with the outcome once the commit of `ticket` is durable and published (or
    /// its group failed: the error ``awaitDurable(_:)`` would throw), without blocking the calling
    /// thread. `notify` runs on this thread when the ticket has settled already, otherwise on the
    /// thread that synced its group, under the group lock: it must only hand the outcome on (resume
    /// a continuation). The groups of such waiters are led by one relay thread of the store's own,
    /// which syncs group after group while any of them waits; so many tasks committing at once
    /// cost one thread, not one blocked thread each (the typed API's transactions use this when a
    /// commit is not alone).
    package func notifyWhenDurable(_ ticket: CommitTicket, _ notify: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        guard groupCommit.notifyWhenSettled(ticket, notify: notify) else { return }
        relayQueue.async {
            self.groupCommit.relay(gate: self.writerGate, unlockFile: self.unlockFileWriter, sync: self.syncGroup)
        }
    }

    /// With the gate held, handed over by the commit that made a packing batch due: builds the
    /// packing commit on a background thread while that commit waits for its sync.
    ///
    /// The gate goes from the commit straight to the packing commit, so the next writer builds on
    /// the packing commit and the order of commits does not depend on timing. The packing commit
    /// registers like any durable commit and releases the gate; it then waits up to
    /// ``HistoryPacking/joinDelayNanoseconds`` for a later commit to lead its group, and leads it
    /// itself after that. It is a commit like any other for crashes: until its group is synced,
    /// recovery returns to the state before it, which reads the same.
    ///
    /// A failure leaves the store as the commit before it left it (packing is retried by the
    /// next commit that finds a batch due); it is recorded in ``packingCommitFailure``.
    func startPackingCommit() {
        writerGate.handOver()
        // A queue of the store's own, not the shared pool: its thread is not one that writers
        // blocked at the gate may have taken (a created serial queue gets a thread even then).
        packingQueue.async { self.runPackingCommit() }
    }

    private func runPackingCommit() {
        writerGate.takeOver()
        do {
            let transaction = try beginWriteHoldingGate()
            transaction.history.packsOnly = true
            // Nothing to write (another commit packed the batch first): a success all the same.
            guard let ticket = try transaction.writeCommit() else {
                packingCommitFailure = nil
                return
            }
            // While another open file has the store (another process, or another handle), its
            // writers wait for this process's writer lock: sync at once rather than keep them
            // waiting for a commit of this process to share the sync.
            let othersWait = (try? fileLocks?.isOpenElsewhere()) ?? false
            try groupCommit.waitForSync(
                ticket, joiningWithin: othersWait ? 0 : HistoryPacking.joinDelayNanoseconds, gate: writerGate,
                unlockFile: unlockFileWriter, sync: syncGroup)
            packingCommitFailure = nil
        } catch {
            packingCommitFailure = error
        }
    }

    /// With the gate held: settles every registered commit before acting on the published state.
    func settleGroups() {
        groupCommit.settleAll(gate: writerGate, unlockFile: unlockFileWriter, sync: syncGroup)
    }

    /// The leader's work: one header slot naming the group's newest state, one sync, publish.
    ///
    /// The slot goes into the slot not holding the newest synced state, as every commit's does.
    /// Each member named the previous group's end as synced, so recovery of this slot checks the
    /// pages born in the group that its end reaches, which are all that is written; until the
    /// next group is synced none may reuse the group's pages. When the group fails, every
    /// registered commit fails with it: their staged pages are dropped at once (their page numbers
    /// are free in the published state, and another process may reuse them).
    private func syncGroup(_ group: GroupCommit.Group) throws {
        let (index, slot) = lock.withLock { slots.nextSlot(for: group.end.stateReference, syncs: true) }
        do {
            // The members' pages first, in runs: the slot must reach the file after them.
            try pageFile.writeStaged(through: group.end.transaction)
            try writeSlot(slot, at: index)
            try pageFile.file.synchronize()
        } catch let error as IOError where error.operation == "fdatasync" {
            recordSyncFailure(error)
            pruningMemory.forget()
            pageFile.staged.removeAll()
            throw StoreError.writesDisabledAfterSyncFailure(underlying: error)
        } catch {
            pruningMemory.forget()
            pageFile.staged.removeAll()
            throw error
        }
        coordination?.recordSynced(sequence: slot.sequence)
        lock.withLock {
            published = group.end
            slots.recordWrite(index, slot: slot, snapshot: group.end, synced: true)
            slots.reuseLimit = group.firstMember
        }
        coordination?.bumpChangeCounter()
        lock.withLock { seenChangeCounter = coordination?.changeCounter ?? 0 }
    }
}
