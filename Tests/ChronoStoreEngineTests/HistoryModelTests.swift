// Randomized history: commits, undo, redo, revert, prune and clear against a model of every
// root's contents; after every step each retained root must read exactly as committed.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// Checks every retained root against the record, and the store's page accounting.
func checkRetainedRoots(_ store: Store, _ record: WorkloadRecord) throws -> String? {
    for item in try store.history(allBranches: true) {
        guard let expected = record.contentsByRoot[item.id] else { return "root \(item.id.rawValue) was never committed" }
        let reader = try store.beginRead(at: .root(item.id))
        defer { reader.close() }
        if try contents(of: reader) != expected { return "retained root \(item.id.rawValue) reads differently" }
    }
    let report = try store.verify()
    if !report.isSound || report.leakedPageCount != 0 { return "verify: \(report)" }
    return nil
}

/// Backs up with history and checks the copy root by root (ids differ, order does not).
func checkHistoryBackup(of store: Store) throws -> String? {
    let directory = try TemporaryDirectory()
    try store.backupWithHistory(to: directory.file("history.chrono"))
    let backup = try Store.open(at: directory.file("history.chrono"))
    defer { try? backup.close() }
    let sourceItems = try store.history(allBranches: true)
    let copiedItems = try backup.history(allBranches: true)
    guard sourceItems.count == copiedItems.count else { return "backup holds \(copiedItems.count) roots, source \(sourceItems.count)" }
    for (original, copy) in zip(sourceItems, copiedItems) {
        let left = try store.beginRead(at: .root(original.id))
        let right = try backup.beginRead(at: .root(copy.id))
        defer { left.close(); right.close() }
        if try contents(of: left) != contents(of: right) { return "backup root \(copy.id.rawValue) differs from \(original.id.rawValue)" }
        if original.isHead != copy.isHead || original.label != copy.label { return "backup root \(copy.id.rawValue) lost its place" }
    }
    let report = try backup.verify()
    if !report.isSound || report.leakedPageCount != 0 { return "backup verify: \(report)" }
    try backup.clearHistory()
    let cleared = try backup.verify()
    if !cleared.isSound || cleared.leakedPageCount != 0 { return "backup verify after clearing history: \(cleared)" }
    return nil
}

@Suite("History model")
struct HistoryModelTests {
    @Test(arguments: [RetentionPolicy.lastRoots(2), .lastRoots(5), .days(0), .limitless])
    func everyRetainedRootReadsAsCommittedAfterEveryStep(retention: RetentionPolicy) throws {
        let seed = SeededGenerator.seed()
        print("HistoryModelTests (\(retention)) seed: \(seed)")
        var seeds = SeededGenerator(seed: seed)
        let runs = Environment.soakEnabled ? 200 : 12
        for _ in 0..<runs {
            let durability: Durability = Bool.random(using: &seeds) ? .durable : .deferred
            let simulator = CrashSimulator(durability: durability, retention: retention)
            let workload = RandomWorkload(seed: seeds.next(), stepCount: 40)
            let record = WorkloadRecord()
            var failure: String?
            _ = try simulator.run(crashAfter: nil) { store, file in
                try workload.run(on: store, file: file, record: record) { store in
                    if failure == nil, let problem = try checkRetainedRoots(store, record) { failure = problem }
                }
                if failure == nil, let problem = try checkHistoryBackup(of: store) { failure = problem }
            }
            #expect(failure == nil, "seed \(seed), workload \(workload.seed) (\(durability)): \(failure ?? "")")
            if failure != nil { return }
        }
    }

    /// Regression (a soak run, 2026-12-03): a compaction right after an undo left its first
    /// pass's root retained beside the second's; the workload model now knows that root's
    /// contents (the head's) and checks them.
    @Test func aCompactionAfterAnUndoKeepsRootsThatReadAsTheHead() throws {
        let simulator = CrashSimulator(durability: .deferred, retention: .lastRoots(2))
        let workload = RandomWorkload(seed: 9013493687713522559, stepCount: 40)
        let record = WorkloadRecord()
        var failure: String?
        _ = try simulator.run(crashAfter: nil) { store, file in
            try workload.run(on: store, file: file, record: record) { store in
                if failure == nil, let problem = try checkRetainedRoots(store, record) { failure = problem }
            }
        }
        #expect(failure == nil, "\(failure ?? "")")
    }

    @Test func undoRedoAndBranchesFollowTheirTargets() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("undo.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let a = try store.write(label: "a") { try $0.put(bytes("k"), bytes("a"), in: "c") }.1!
        let b = try store.write(label: "b") { try $0.put(bytes("k"), bytes("b"), in: "c") }.1!
        #expect(try store.undo() == a)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "a")
        #expect(try store.redo() == b)
        #expect(try store.undo(steps: 2) == TransactionID(1))
        #expect(try store.read { try $0.count(in: "c") } == 0)
        #expect(throws: StoreError.cannotUndo(steps: 1, available: 0)) { try store.undo() }
        #expect(try store.redo() == a)
        // A new commit after an undo branches: redo now goes to the new child.
        let c = try store.write(label: "c") { try $0.put(bytes("k"), bytes("c"), in: "c") }.1!
        #expect(throws: StoreError.cannotRedo) { try store.redo() }
        #expect(try store.undo() == a)
        #expect(try store.redo() == c)
        let all = try store.history(allBranches: true)
        #expect(all.first { $0.id == b }?.isBranchTip == true)
        #expect(try store.history().map(\.id) == [c, a, TransactionID(1)])
        // Undo and redo survive a reopen.
        try store.undo()
        try store.close()
        let reopened = try Store.open(at: directory.file("undo.chrono"))
        defer { try? reopened.close() }
        #expect(try reopened.snapshot.head.transaction == a)
        #expect(try reopened.redo() == c)
    }

    @Test func droppingUndoneBranchesFreesThemAtTheNextCommit() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("drop.chrono"), options: StoreOptions(retention: .limitless, dropsUndoneBranches: true))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("a"), in: "c") }
        let b = try store.write { try $0.put(bytes("k"), bytes(String(repeating: "b", count: 5000)), in: "c") }.1!
        try store.undo()
        try store.write { try $0.put(bytes("k"), bytes("c"), in: "c") }
        #expect(try store.history(allBranches: true).contains { $0.id == b } == false)
        #expect(throws: StoreError.rootNotRetained(b)) { try store.beginRead(at: .root(b)) }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func revertIsACommitThatCanBeUndone() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("revert.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let first = try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }.1!
        let second = try store.write { try $0.put(bytes("k"), bytes("2"), in: "c") }.1!
        let reverted = try store.revert(to: first, label: "Revert")
        #expect(reverted > second)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "1")
        #expect(try store.history().first?.revertedTo == first)
        #expect(try store.undo() == second)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "2")
    }

    @Test func asOfReadsFindRootsByIdAndByTime() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("asof.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let first = try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }.1!
        let firstTime = try store.history().first!.timeMilliseconds
        let second = try store.write { try $0.put(bytes("k"), bytes("2"), in: "c") }.1!
        let old = try store.beginRead(at: .root(first))
        #expect(text(try old.value(forKey: bytes("k"), in: "c")) == "1")
        old.close()
        // The newest root committed at or before the instant (several may share a millisecond).
        let newestAtThatTime = try store.history().filter { $0.timeMilliseconds <= firstTime }.map(\.id).max()
        let byTime = try store.beginRead(at: .time(firstTime))
        #expect(byTime.root.transaction == newestAtThatTime)
        #expect(text(try byTime.value(forKey: bytes("k"), in: "c")) == (newestAtThatTime == first ? "1" : "2"))
        byTime.close()
        let later = try store.beginRead(at: .time(Clock.nowMilliseconds() + 1000))
        #expect(later.root.transaction == second)
        later.close()
        #expect(throws: StoreError.noRootAtOrBefore(milliseconds: 0)) { try store.beginRead(at: .time(0)) }
        #expect(throws: StoreError.rootNotRetained(TransactionID(999))) { try store.beginRead(at: .root(TransactionID(999))) }
    }

    @Test func aReaderKeepsItsRootThroughPruning() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("pin.chrono"), options: StoreOptions(retention: .lastRoots(1)))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("old"), in: "c") }
        let reader = try store.beginRead()
        for index in 0..<50 { try store.write { try $0.put(bytes("k"), bytes("new \(index)"), in: "c") } }
        try store.clearHistory()
        #expect(text(try reader.value(forKey: bytes("k"), in: "c")) == "old")
        reader.close()
        try store.write { try $0.put(bytes("k"), bytes("last"), in: "c") }
        #expect(try store.history(allBranches: true).count == 1)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func snapshotsSurviveRetentionAndCheckOutAsUndoableCommits() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("snap.chrono"), options: StoreOptions(retention: .lastRoots(2)))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("before"), in: "c") }
        let snapshot = try store.createSnapshot(named: "before risky edit")
        #expect(snapshot.recordCount == 1)
        #expect(throws: StoreError.snapshotExists("before risky edit")) { try store.createSnapshot(named: "before risky edit") }
        for index in 0..<30 { try store.write { try $0.put(bytes("k"), bytes("edit \(index)"), in: "c") } }
        try store.prune()
        try store.clearHistory()
        let reader = try store.beginRead(at: .snapshot("before risky edit"))
        #expect(text(try reader.value(forKey: bytes("k"), in: "c")) == "before")
        reader.close()
        let headBefore = try store.snapshot.head.transaction
        try store.checkoutSnapshot(named: "before risky edit")
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "before")
        #expect(try store.undo() == headBefore)
        #expect(try store.history(allBranches: true).contains { $0.snapshots == ["before risky edit"] })
        try store.deleteSnapshot(named: "before risky edit")
        #expect(throws: StoreError.snapshotNotFound("before risky edit")) { try store.deleteSnapshot(named: "before risky edit") }
        // The undone checkout is a side branch until it falls two roots behind the head; then
        // the old snapshot root, no longer a fork point, goes too.
        for index in 0..<3 { try store.write { try $0.put(bytes("k"), bytes("after \(index)"), in: "c") } }
        try store.prune()
        #expect(try store.history(allBranches: true).count == 2)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }
}

@Suite("History regressions")
struct HistoryRegressionTests {
    /// Regression: with undone branches dropped, a revert into the undone branch dropped the new head.
    @Test func revertingIntoAnUndoneBranchKeepsTheNewHead() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("drop-revert.chrono"), options: StoreOptions(retention: .limitless, dropsUndoneBranches: true))
        try store.write { try $0.put(bytes("k"), bytes("a"), in: "c") }
        let b = try store.write { try $0.put(bytes("k"), bytes("b"), in: "c") }.1!
        try store.undo()
        let head = try store.revert(to: b)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
        #expect(try store.history(allBranches: true).contains { $0.id == head })
        try store.write { try $0.put(bytes("k"), bytes("c"), in: "c") }
        try store.close()
        let reopened = try Store.open(at: directory.file("drop-revert.chrono"))
        defer { try? reopened.close() }
        #expect(text(try reopened.read { try $0.value(forKey: bytes("k"), in: "c") }) == "c")
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    /// Regression: creating or deleting a snapshot committed an extra root and lost the redo target.
    @Test func snapshotEditsCommitNoRootAndKeepRedo() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("snap-redo.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let a = try store.write { try $0.put(bytes("k"), bytes("a"), in: "c") }.1!
        let b = try store.write { try $0.put(bytes("k"), bytes("b"), in: "c") }.1!
        try store.undo()
        try store.createSnapshot(named: "s")
        #expect(try store.snapshot.head.transaction == a)
        try store.deleteSnapshot(named: "s")
        #expect(try store.snapshot.head.transaction == a)
        #expect(try store.redo() == b)
        #expect(try store.history(allBranches: true).count == 3)
    }

    /// Regression: clearHistory made one pass, so a fork point met before its branches stayed.
    @Test func clearingHistoryLeavesOnlyTheHead() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("clear.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        for value in ["1", "2", "3"] { try store.write { try $0.put(bytes("k"), bytes(value), in: "c") } }
        try store.undo()
        try store.write { try $0.put(bytes("k"), bytes("4"), in: "c") }
        let dropped = try store.clearHistory()
        #expect(try store.history(allBranches: true).count == 1)
        #expect(dropped == 4)
        #expect(throws: StoreError.cannotUndo(steps: 1, available: 0)) { try store.undo() }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }
}
