// Group commit: durable commits written while a sync runs share the next sync, stay unacknowledged
// until it, survive a crash at any operation once acknowledged, and fail together when it fails.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// Puts and deletes for one transaction, with the contents they lead to.
private func randomEdits(
    _ transaction: WriteTransaction, contents: inout Contents, generator: inout SeededGenerator
) throws {
    for _ in 0..<Int.random(in: 1...12, using: &generator) {
        let collection = ["alpha", "beta"][Int.random(in: 0..<2, using: &generator)]
        let key = bytes("k\(Int.random(in: 0..<120, using: &generator))")
        if Int.random(in: 0..<4, using: &generator) == 0 {
            try transaction.delete(key, in: collection)
            contents[collection]?[key] = nil
        } else {
            let large = Int.random(in: 0..<15, using: &generator) == 0
            let value = generator.bytes(large ? Int.random(in: 2000..<12000, using: &generator) : Int.random(in: 1..<150, using: &generator))
            try transaction.put(key, value, in: collection)
            contents[collection, default: [:]][key] = value
        }
    }
}

/// What a pipelined workload has seen: the newest acknowledged contents, and every commit
/// written but not yet acknowledged (a crash may leave any of them, or the acknowledged one).
private final class PipelineRecord {
    var acknowledged: Contents = [:]
    var inFlight: [Contents] = []
    var contentsByRoot: [TransactionID: Contents] = [TransactionID(1): [:]]
    /// The newest contents written, acknowledged or not: the next commit builds on them.
    var newest: Contents = [:]

    func written(_ contents: Contents, head: TransactionID?) {
        newest = contents
        inFlight.append(normalized(contents))
        if let head { contentsByRoot[head] = normalized(contents) }
    }

    func acknowledgeAll() {
        acknowledged = newest
        inFlight = []
    }

    var acceptableAfterCrash: [Contents] { [normalized(acknowledged)] + inFlight }
}

/// Single-threaded and replayable: commits in turn, and during some syncs (as another thread
/// would while the disk works) writes one to three more commits that the next group covers.
private struct PipelinedWorkload {
    let seed: UInt64
    let stepCount: Int

    func run(on store: Store, file: FaultInjectingFile, record: PipelineRecord = PipelineRecord()) throws {
        var generator = SeededGenerator(seed: seed)
        var burstTickets: [CommitTicket] = []
        for _ in 0..<stepCount {
            let burst = Int.random(in: 0..<3, using: &generator) == 0 ? 0 : Int.random(in: 1...3, using: &generator)
            let burstSeed = generator.next()
            var pending = burst
            file.duringSyncs {
                guard pending > 0 else { return }
                var burstGenerator = SeededGenerator(seed: burstSeed)
                while pending > 0 {
                    pending -= 1
                    // A crash inside stops the burst; the sync that runs it then fails too.
                    do {
                        if let ticket = try writeOne(store, record: record, generator: &burstGenerator) { burstTickets.append(ticket) }
                    } catch {
                        return
                    }
                }
            }
            guard let ticket = try writeOne(store, record: record, generator: &generator) else { continue }
            try store.awaitDurable(ticket)
            // The commit is acknowledged; commits the burst wrote during its sync are not yet.
            let burstWritten = burstTickets.count
            record.acknowledged = record.contentsByRoot[ticket.head] ?? record.acknowledged
            record.inFlight = Array(record.inFlight.suffix(burstWritten))
            if let last = burstTickets.last, Bool.random(using: &generator) {
                file.duringSyncs(nil)
                try store.awaitDurable(last)
                record.acknowledgeAll()
            }
            burstTickets = []
        }
        file.duringSyncs(nil)
    }

    /// Writes one commit of random edits; nil when they changed nothing.
    private func writeOne(_ store: Store, record: PipelineRecord, generator: inout SeededGenerator) throws -> CommitTicket? {
        let transaction = try store.beginWrite()
        var contents = record.newest
        do {
            try randomEdits(transaction, contents: &contents, generator: &generator)
        } catch {
            transaction.abort()
            throw error
        }
        // Until it returns, a crash may leave this commit or not: acceptable either way.
        record.inFlight.append(normalized(contents))
        let written = try transaction.writeCommit()
        record.inFlight.removeLast()
        guard let ticket = written else { return nil }
        record.written(contents, head: ticket.head)
        return ticket
    }
}

@Suite("Group commit")
struct GroupCommitTests {
    @Test func commitsWrittenDuringASyncShareTheNextSyncAndAreAcknowledgedOnlyAfterIt() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        let first = try #require(try store.beginWrite().putting("first"))
        var duringSync: [CommitTicket] = []
        file.duringSyncs {
            guard duringSync.isEmpty else { return }
            for index in 0..<3 { duringSync.append(try! store.beginWrite().putting("during-\(index)")!) }
        }
        let syncsBefore = file.syncCount
        try store.awaitDurable(first)
        file.duringSyncs(nil)
        #expect(file.syncCount == syncsBefore + 1)
        // The first commit is published; the three written during its sync are not, yet.
        #expect(try store.read { try $0.value(forKey: bytes("first"), in: "c") } != nil)
        #expect(try store.read { try $0.value(forKey: bytes("during-0"), in: "c") } == nil)
        #expect(file.pendingOperationCount > 0)

        try store.awaitDurable(duringSync[2])
        #expect(file.syncCount == syncsBefore + 2, "one sync covers the three commits")
        #expect(file.pendingOperationCount == 0)
        for ticket in duringSync { try store.awaitDurable(ticket) }
        #expect(try store.read { try $0.count(in: "c") } == 4)
        #expect(try store.snapshot.head.transaction == duringSync[2].head)
        try store.close()
        let reopened = try reopenedAfterCrash(file)
        #expect(try reopened.read { try $0.count(in: "c") } == 4)
        #expect(try reopened.verify().isSound)
    }

    @Test func aLoneCommitIsMadeDurableByItsOwnCallerAndOneAmongOthersIsLeftToWait() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        // Alone: the call syncs it and returns true, published and durable.
        let lone = try #require(try store.beginWrite().putting("lone"))
        var syncsBefore = file.syncCount
        #expect(try store.awaitDurableIfAlone(lone))
        #expect(file.syncCount == syncsBefore + 1)
        #expect(file.pendingOperationCount == 0)
        #expect(try store.read { try $0.value(forKey: bytes("lone"), in: "c") } == bytes("lone"))
        // Settled already: true again, without another sync.
        #expect(try store.awaitDurableIfAlone(lone))
        #expect(file.syncCount == syncsBefore + 1)

        // Two commits in flight: neither is alone, so nothing is synced or published.
        let first = try #require(try store.beginWrite().putting("first"))
        let second = try #require(try store.beginWrite().putting("second"))
        syncsBefore = file.syncCount
        #expect(try store.awaitDurableIfAlone(second) == false)
        #expect(try store.awaitDurableIfAlone(first) == false)
        #expect(file.syncCount == syncsBefore)
        #expect(try store.read { try $0.value(forKey: bytes("first"), in: "c") } == nil)
        try store.awaitDurable(second)
        #expect(file.syncCount == syncsBefore + 1, "the two still share one sync")
        #expect(try store.awaitDurableIfAlone(first))

        // A commit written while a leader syncs is not alone either: it waits for the next group.
        let leader = try #require(try store.beginWrite().putting("leader"))
        var duringSync: CommitTicket?
        var aloneDuringSync: Bool?
        file.duringSyncs {
            guard duringSync == nil else { return }
            duringSync = try! store.beginWrite().putting("during")
            aloneDuringSync = try! store.awaitDurableIfAlone(duringSync!)
        }
        #expect(try store.awaitDurableIfAlone(leader))
        file.duringSyncs(nil)
        #expect(aloneDuringSync == false)
        // Once that sync is over it is the only commit in flight: its caller syncs it.
        syncsBefore = file.syncCount
        #expect(try store.awaitDurableIfAlone(try #require(duringSync)))
        #expect(file.syncCount == syncsBefore + 1)
        try store.close()
        let reopened = try reopenedAfterCrash(file)
        #expect(try reopened.read { try $0.count(in: "c") } == 5)
        #expect(try reopened.verify().isSound)
    }

    @Test func aDeferredCommitIsSettledWithoutASync() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .deferred))
        let ticket = try #require(try store.beginWrite().putting("deferred"))
        let syncsBefore = file.syncCount
        #expect(try store.awaitDurableIfAlone(ticket))
        #expect(file.syncCount == syncsBefore)
        #expect(try store.read { try $0.value(forKey: bytes("deferred"), in: "c") } == bytes("deferred"))
        try store.close()
    }

    @Test func aRegisteredCommitsPagesWaitForItsGroupsLeaderWhileTheNextWriterReadsThem() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        try store.write { try $0.put(bytes("base"), bytes("base"), in: "c") }
        let writesBefore = file.writeCount
        let first = try #require(try store.beginWrite().putting("first"))
        #expect(file.writeCount == writesBefore, "a registered commit writes nothing before its group's leader")
        // The next writer builds on the registered commit: its pages come from the stage.
        let next = try store.beginWrite()
        #expect(try next.value(forKey: bytes("first"), in: "c") == bytes("first"))
        #expect(try next.count(in: "c") == 2)
        let second = try #require(try next.putting("second"))
        #expect(file.writeCount == writesBefore)
        try store.awaitDurable(first)
        try store.awaitDurable(second)
        #expect(file.writeCount > writesBefore)
        #expect(file.pendingOperationCount == 0)
        #expect(try store.read { try $0.count(in: "c") } == 3)
        try store.close()
        let reopened = try reopenedAfterCrash(file)
        #expect(try reopened.read { try $0.value(forKey: bytes("second"), in: "c") } == bytes("second"))
        #expect(try reopened.read { try $0.count(in: "c") } == 3)
        #expect(try reopened.verify().isSound)
    }

    @Test func aGroupsLeaderLeavesPagesALaterMemberFreedUnwrittenAndRecoveryOpensTheEnd() throws {
        let file = FaultInjectingFile()
        let options = StoreOptions(durability: .durable, retention: .lastRoots(1))
        let store = try Store.create(in: file, options: options)
        try store.write { try $0.put(bytes("base"), bytes("base"), in: "c") }
        let first = try #require(try store.beginWrite().putting("first"))
        let second = try #require(try store.beginWrite().putting("second"))
        try store.awaitDurable(second)
        try store.awaitDurable(first)
        // The end's previous state is the first member's: the second released it, so it was
        // never written (its slot holds whatever was there before, not that state).
        let end = try store.snapshot
        let firstState = end.state.previous
        #expect(firstState.birth == TransactionID(end.transaction.rawValue - 1))
        let image = file.durableImage
        let pageSize = store.pageFile.pageSize
        let offset = Int(firstState.page.rawValue) * pageSize
        let slot = PageBuffer(pageSize: pageSize)
        if offset + pageSize <= image.count {
            image.withUnsafeBytes { slot.bytes.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: pageSize) }
        }
        #expect(throws: StoreError.self, "the first member's state page was written") {
            try slot.verify(page: firstState.page, kind: .state, birth: firstState.birth)
        }
        try store.close()
        // A crash right after the group's sync: recovery checks the end by what it reaches.
        let reopened = try Store.open(file: FaultInjectingFile(image: image), options: options)
        #expect(try reopened.read { try $0.count(in: "c") } == 3)
        #expect(try reopened.verify().isSound)
    }

    /// Found by review: a transaction that spilled a page, freed it and was handed the same page
    /// number again left the spilled bytes in that slot with the same birth; if a later member
    /// released the page and the leader skipped it, a reader of the slot would take them for it.
    @Test func aLeaderWritesTheReleasedPagesOfASpillingMemberAndSkipsOnlyTheOthers() {
        func pages(_ numbers: ClosedRange<UInt64>, birth: UInt64) -> [PageBuffer] {
            numbers.map { number in
                let page = PageBuffer(pageSize: 4096)
                page.seal(kind: .leaf, page: PageID(number), birth: TransactionID(birth))
                return page
            }
        }
        for spilled in [false, true] {
            let stage = StagedPages()
            stage.stage(pages(10...13, birth: 5), released: [], by: TransactionID(5), spilled: spilled)
            stage.stage(pages(14...15, birth: 6), released: [PageID(11), PageID(12)], by: TransactionID(6), spilled: false)
            let (live, dead) = stage.pages(bornThrough: TransactionID(6))
            #expect(Set(dead.map(\.pageID.rawValue)) == (spilled ? [] : [11, 12]))
            #expect(live.count + dead.count == 6)
        }
    }

    @Test func aFailedGroupSyncFailsEveryCommitItCoversAndTheStoreKeepsTheAcknowledgedOnes() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        try store.write { try $0.put(bytes("kept"), bytes("1"), in: "c") }
        let first = try #require(try store.beginWrite().putting("lost-first"))
        var second: CommitTicket?
        var third: WriteTransaction?
        file.duringSyncs {
            guard second == nil else { return }
            second = try! store.beginWrite().putting("lost-second")
            third = try! store.beginWrite()
        }
        file.failSyncs(1, losingWrites: true)
        #expect(throws: StoreError.self) { try store.awaitDurable(first) }
        file.duringSyncs(nil)
        // A writer still building on the failed group reads its pages, now neither staged nor in
        // the file: it gets the group's error, not "damaged" (found by review).
        let building = try #require(third)
        let error = #expect(throws: StoreError.self) {
            _ = try building.rawPage(building.base.state.head, kind: .root)
        }
        if case .writesDisabledAfterSyncFailure? = error {} else { Issue.record("the building writer got \(String(describing: error))") }
        building.abort()
        // The commit built on the failed one was never synced: it fails too, and so do new writers.
        #expect(throws: StoreError.self) { try store.awaitDurable(try #require(second)) }
        // The failed commits' pages left the stage with the failure (found by review: their
        // page numbers are free, and another process may reuse them before this one writes).
        #expect(store.pageFile.staged.isEmpty)
        #expect(throws: StoreError.self) { try store.write { try $0.put(bytes("after"), bytes("x"), in: "c") } }

        let reopened = try reopenedAfterCrash(file)
        #expect(text(try reopened.read { try $0.value(forKey: bytes("kept"), in: "c") }) == "1")
        #expect(try reopened.read { try $0.value(forKey: bytes("lost-first"), in: "c") } == nil)
        #expect(try reopened.verify().isSound)
    }

    @Test func threadsCommittingAtOnceShareSyncsAndLoseNoCommit() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        // Slow syncs (a debug build spends milliseconds building a commit): the other threads
        // write their commits meanwhile.
        file.duringSyncs { usleep(50_000) }
        let threads = 8
        let perThread = 10
        onThreads(threads) { thread in
            for index in 0..<perThread {
                try! store.write { transaction in
                    let seen = try transaction.count(in: "c")
                    try transaction.put(bytes("t\(thread)-\(index)"), bytes("\(seen)"), in: "c")
                }
            }
        }
        file.duringSyncs(nil)
        let total = threads * perThread
        #expect(file.syncCount < total / 2, "\(file.syncCount) syncs for \(total) commits")
        // Every transaction saw every commit before it: the counts are 0 ..< total, once each.
        let seen = try store.read { reader in
            var values: [Int] = []
            try reader.scan("c", range: .all, reverse: false) { _, value in
                values.append(Int(text(value) ?? "") ?? -1)
                return true
            }
            return values.sorted()
        }
        #expect(seen == Array(0..<total))
        #expect(try store.verify().isSound)
        try store.close()
    }

    /// A settled group wakes one waiter of the next group to lead it: when the leader has nothing
    /// more to commit, a commit that registered during its sync must still be synced (before the
    /// per-group wake-ups, every waiter woke; now only the signal does it).
    @Test func aCommitRegisteredDuringAGroupsSyncIsLedWhenThatGroupsLeaderHasNothingMoreToCommit() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        let second = DispatchSemaphore(value: 0)
        let started = AcknowledgedKeys()
        file.duringSyncs {
            guard started.keys.isEmpty else { return }
            started.add("second")
            // During the first commit's sync: a second committer builds on it, registers and
            // waits (a leader is syncing); then this sync ends and its leader's thread leaves.
            Thread {
                try! store.write { try $0.put(bytes("second"), bytes("2"), in: "c") }
                second.signal()
            }.start()
            // Until the second commit has registered (the first is registered too: two), then a
            // moment for its committer to go to sleep waiting for the group after this one.
            let deadline = Date().addingTimeInterval(30)
            while store.groupCommit.registeredCount < 2 && Date() < deadline { usleep(1_000) }
            usleep(50_000)
        }
        try store.write { try $0.put(bytes("first"), bytes("1"), in: "c") }
        #expect(second.wait(timeout: .now() + .seconds(30)) == .success, "the second commit was left waiting for a leader")
        file.duringSyncs(nil)
        let reopened = try reopenedAfterCrash(file)
        #expect(try reopened.read { try $0.value(forKey: bytes("second"), in: "c") } == bytes("2"))
        try reopened.close()
        try store.close()
    }

    @Test func commitsWaitingWithoutAThreadShareTheRelaysSyncAndAreToldOnlyOnceItIsDone() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        try store.write { try $0.put(bytes("base"), bytes("base"), in: "c") }
        let tickets = try ["a", "b", "c"].map { try #require(try store.beginWrite().putting($0)) }
        let syncsBefore = file.syncCount
        let outcomes = NotifiedOutcomes()
        for ticket in tickets {
            store.notifyWhenDurable(ticket) { outcome in
                // Told from the relay once the group is synced: nothing it wrote is still pending.
                outcomes.add(ticket.number, outcome, pendingWrites: file.pendingOperationCount)
            }
        }
        #expect(outcomes.wait(for: 3), "a waiter was never told")
        #expect(file.syncCount == syncsBefore + 1, "the three share one sync")
        for told in outcomes.all {
            #expect(throws: Never.self) { try told.outcome.get() }
            #expect(told.pendingWrites == 0, "ticket \(told.number) was told before its sync")
        }
        // Settled already: told at once, on the calling thread.
        let atOnce = NotifiedOutcomes()
        store.notifyWhenDurable(tickets[0]) { atOnce.add(tickets[0].number, $0, pendingWrites: 0) }
        #expect(atOnce.all.count == 1)
        #expect(try store.read { try $0.count(in: "c") } == 4)
        try store.close()
        let reopened = try reopenedAfterCrash(file)
        #expect(try reopened.read { try $0.count(in: "c") } == 4)
        #expect(try reopened.verify().isSound)
    }

    @Test func aFailedSyncIsReportedToEveryCommitWaitingWithoutAThread() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        try store.write { try $0.put(bytes("kept"), bytes("1"), in: "c") }
        let tickets = try ["lost-a", "lost-b"].map { try #require(try store.beginWrite().putting($0)) }
        file.failSyncs(1, losingWrites: true)
        let outcomes = NotifiedOutcomes()
        for ticket in tickets {
            store.notifyWhenDurable(ticket) { outcomes.add(ticket.number, $0, pendingWrites: 0) }
        }
        #expect(outcomes.wait(for: 2), "a waiter was never told")
        for told in outcomes.all {
            #expect(throws: StoreError.self, "ticket \(told.number) was told it is durable") { try told.outcome.get() }
        }
        let reopened = try reopenedAfterCrash(file)
        #expect(text(try reopened.read { try $0.value(forKey: bytes("kept"), in: "c") }) == "1")
        #expect(try reopened.read { try $0.value(forKey: bytes("lost-a"), in: "c") } == nil)
        #expect(try reopened.verify().isSound)
    }

    /// Each settled group wakes only its own members and one leader for the next group: a member
    /// must not return before the sync covering it, and no member may be left asleep. Durable
    /// images taken while eight threads commit hold every commit acknowledged before each image.
    /// Committers wait blocking a thread, without one (the relay leads their groups), or half of
    /// each: then blocked waiters and the relay take turns leading.
    @Test(arguments: [WaitKind.blocking, .notified, .mixed])
    func commitsAcknowledgedWhileManyGroupsSettleAreInTheDurableImageAndNoCommitterIsLeftWaiting(waiting: WaitKind) throws {
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(durability: .durable))
        // Short syncs: many groups of a few commits each, so many hand-overs between groups.
        file.duringSyncs { usleep(200) }
        let acknowledged = AcknowledgedKeys()
        let (threads, perThread) = (8, 60)
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                for index in 0..<perThread {
                    let key = "t\(thread)-\(index)"
                    if waiting == .blocking || (waiting == .mixed && thread % 2 == 0) {
                        try! store.write { try $0.put(bytes(key), bytes(key), in: "c") }
                    } else {
                        let ticket = try! store.beginWrite().putting(key)!
                        let told = NotifiedOutcomes()
                        store.notifyWhenDurable(ticket) { told.add(ticket.number, $0, pendingWrites: 0) }
                        guard told.wait(for: 1, seconds: 120) else { return }
                        try! told.all[0].outcome.get()
                    }
                    acknowledged.add(key)
                }
                done.leave()
            }.start()
        }
        var samples: [(keys: [String], image: [UInt8])] = []
        let deadline = Date().addingTimeInterval(120)
        while done.wait(timeout: .now() + .milliseconds(5)) == .timedOut {
            guard Date() < deadline else {
                Issue.record("committers still waiting after 120 s: a settled group left its successors asleep")
                return
            }
            // The acknowledged keys first: each was synced before it was acknowledged, so the
            // durable image taken after them holds them all.
            let keys = acknowledged.keys
            if samples.count < 16 { samples.append((keys, file.durableImage)) }
        }
        file.duringSyncs(nil)
        let total = threads * perThread
        #expect(file.syncCount < total, "\(file.syncCount) syncs for \(total) commits: no group had two members")
        #expect(acknowledged.keys.count == total)
        for (number, sample) in samples.enumerated() {
            let reopened = try Store.open(file: FaultInjectingFile(image: sample.image), options: StoreOptions())
            let missing = try reopened.read { reader in try sample.keys.filter { try reader.value(forKey: bytes($0), in: "c") == nil } }
            #expect(missing.isEmpty, "durable image \(number): acknowledged commits \(missing.prefix(5)) are missing")
            try reopened.close()
        }
        #expect(try store.read { try $0.count(in: "c") } == total)
        #expect(try store.verify().isSound)
        try store.close()
    }

    @Test func reopeningAfterACrashAtAnyOperationOfPipelinedCommitsKeepsEveryAcknowledgedOne() throws {
        let seed = SeededGenerator.seed()
        print("GroupCommitTests seed: \(seed)")
        var seeds = SeededGenerator(seed: seed)
        let targetPoints = Environment.soakEnabled ? 20_000 : 400
        var crashPoints = 0
        while crashPoints < targetPoints {
            // Packing inside commits: the workload's bursts run inside whichever thread syncs, and
            // its record of what was written assumes that is the committing thread, not a packing
            // commit's (crashes during packing commits: `CrashRecoveryTests`, durable runs).
            var packing = HistoryPacking.standard
            packing.inBackground = false
            let simulator = CrashSimulator(
                durability: .durable, retention: [.lastRoots(1), .lastRoots(2), .limitless][Int.random(in: 0..<3, using: &seeds)],
                packing: packing)
            let workload = PipelinedWorkload(seed: seeds.next(), stepCount: Int.random(in: 3...8, using: &seeds))
            let operations = try simulator.operationCount { store, file in try workload.run(on: store, file: file) }
            for crashAfter in 0..<operations {
                crashPoints += 1
                let record = PipelineRecord()
                let run = try simulator.run(crashAfter: crashAfter) { store, file in
                    try workload.run(on: store, file: file, record: record)
                }
                #expect(run.crashed)
                var imageGenerator = SeededGenerator(seed: seeds.next())
                let image = run.file.crashImage(using: &imageGenerator)
                if let failure = try checkRecovery(image: image, record: record, options: simulator.options) {
                    Issue.record("seed \(seed), workload \(workload.seed), crash after \(crashAfter) of \(operations): \(failure)")
                    return
                }
            }
        }
        print("GroupCommitTests: \(crashPoints) crash points checked")
    }

    private func checkRecovery(image: [UInt8], record: PipelineRecord, options: StoreOptions) throws -> String? {
        let file = FaultInjectingFile(name: "recovered", image: image)
        let store: Store
        do {
            store = try Store.open(file: file, options: options)
        } catch {
            return "reopen failed: \(error)"
        }
        let recovered = try contents(of: store)
        guard record.acceptableAfterCrash.contains(recovered) else {
            return "recovered contents match none of the \(record.acceptableAfterCrash.count) acceptable states"
        }
        for item in try store.history(allBranches: true) {
            guard let expected = record.contentsByRoot[item.id] else { continue }
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            guard try contents(of: reader) == expected else { return "retained root \(item.id.rawValue) reads differently" }
        }
        let report = try store.verify()
        guard report.isSound, report.leakedPageCount == 0 else { return "verify after recovery: \(report)" }
        try store.write { try $0.put(bytes("after-crash"), bytes("ok"), in: "alpha") }
        try store.close()
        let reopened = try Store.open(file: file, options: options)
        guard text(try reopened.read { try $0.value(forKey: bytes("after-crash"), in: "alpha") }) == "ok" else {
            return "the commit after recovery was lost"
        }
        return nil
    }
}

/// Runs `body` on `count` threads of their own at once (`concurrentPerform` would use only as
/// many threads as the machine has cores) and returns when all are done.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            body(index)
            done.leave()
        }.start()
    }
    done.wait()
}

extension WriteTransaction {
    /// Puts `key` (its own value) into collection "c" and writes the commit without waiting.
    fileprivate func putting(_ key: String) throws -> CommitTicket? {
        try put(bytes(key), bytes(key), in: "c")
        return try writeCommit()
    }
}

/// Keys whose commits returned, in the order they did, shared by committing threads.
/// `@unchecked Sendable`: `list` is guarded by `lock`.
private final class AcknowledgedKeys: @unchecked Sendable {
    private let lock = Lock()
    private var list: [String] = []

    func add(_ key: String) { lock.withLock { list.append(key) } }
    var keys: [String] { lock.withLock { list } }
}

/// How the committers of a test wait for their syncs.
enum WaitKind: Sendable, CustomStringConvertible {
    /// ``Store/awaitDurable(_:)``: a blocked thread, which leads groups itself.
    case blocking
    /// ``Store/notifyWhenDurable(_:_:)``: told by the relay, which leads their groups.
    case notified
    /// Half of the committers each way.
    case mixed

    var description: String {
        switch self {
        case .blocking: "blocking"
        case .notified: "notified"
        case .mixed: "mixed"
        }
    }
}

/// What ``Store/notifyWhenDurable(_:_:)`` told its waiters, and a way to wait for it.
/// `@unchecked Sendable`: `told` is guarded by `lock`.
private final class NotifiedOutcomes: @unchecked Sendable {
    struct Told {
        let number: UInt64
        let outcome: Result<Void, any Error>
        /// The file's writes not yet synced when the waiter was told.
        let pendingWrites: Int
    }

    private let lock = Lock()
    private var told: [Told] = []
    private let arrived = DispatchSemaphore(value: 0)

    func add(_ number: UInt64, _ outcome: Result<Void, any Error>, pendingWrites: Int) {
        lock.withLock { told.append(Told(number: number, outcome: outcome, pendingWrites: pendingWrites)) }
        arrived.signal()
    }

    /// Whether `count` waiters were told within `seconds`.
    func wait(for count: Int, seconds: Int = 30) -> Bool {
        for _ in 0..<count where arrived.wait(timeout: .now() + .seconds(seconds)) == .timedOut { return false }
        return true
    }

    var all: [Told] { lock.withLock { told } }
}

/// The store as a crash would leave `file`: only what its syncs made durable.
private func reopenedAfterCrash(_ file: FaultInjectingFile) throws -> Store {
    try Store.open(file: FaultInjectingFile(image: file.durableImage), options: StoreOptions())
}
