// Adversarial review findings: focused scenarios around history, compaction, pins and spills.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Dispatch
import Testing

/// Verify reports a sound store with no leaked page.
private func isSound(_ store: Store) throws -> Bool {
    let report = try store.verify()
    return report.isSound && report.leakedPageCount == 0
}

/// A store whose live pages sit at the file's tail with free pages below, so compaction moves
/// pages (and commits a root that replaces the head). History is cleared, then two commits
/// `a` and `b` on key "k" of collection "c".
private func storeReadyToCompact(_ path: String) throws -> (store: Store, a: TransactionID, b: TransactionID) {
    let store = try Store.create(at: path, options: StoreOptions(retention: .limitless))
    // The dropped collection is half again as large as the kept one, so that its free pages hold
    // a rewrite of the kept one even while a reader pins the head's pages (with leaves about 80 %
    // full, equal sizes left too little room and compaction rightly moved nothing).
    try store.write { transaction in
        for index in 0..<450 { try transaction.put(bytes("low\(index)"), [UInt8](repeating: 1, count: 600), in: "low") }
    }
    try store.write { transaction in
        for index in 0..<300 { try transaction.put(bytes("high\(index)"), [UInt8](repeating: 2, count: 600), in: "high") }
    }
    try store.write { _ = try $0.dropCollection("low") }
    try store.clearHistory()
    let a = try store.write(label: "a") { try $0.put(bytes("k"), bytes("a"), in: "c") }.1!
    let b = try store.write(label: "b") { try $0.put(bytes("k"), bytes("b"), in: "c") }.1!
    return (store, a, b)
}

@Suite("Review findings")
struct ReviewFindingsTests {
    // MARK: - Compaction replacing a head whose history child is not its lineage child

    /// The head has an undone revert as its redo target. A revert's lineage parent is its target,
    /// so the head is no fork point, and compaction drops it. The revert keeps the dropped head as
    /// its history parent: redo then undo no longer returns to the compacted head.
    @Test
    func undoFromARevertRedoneAfterCompactionReturnsToTheCompactedHead() throws {
        let directory = try TemporaryDirectory()
        let (store, a, _) = try storeReadyToCompact(directory.file("compact-revert.chrono"))
        defer { try? store.close() }
        let reverted = try store.revert(to: a, label: "revert")
        try store.undo()
        let headBeforeCompaction = try store.snapshot.head.transaction
        let report = try store.compact()
        #expect(report.pagesMoved > 0)
        let compacted = try store.snapshot.head.transaction
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
        #expect(try store.redo() == reverted)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "a")
        var undoneTo: TransactionID?
        #expect(throws: Never.self) { undoneTo = try store.undo() }
        // The head had a root committed on it, so compaction kept it and added its copy as a
        // child: undo from the redone root lands on the head or its copy, reading the same.
        #expect(undoneTo == compacted || undoneTo == headBeforeCompaction)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
        #expect(try store.history().count >= 3)
        #expect(try isSound(store))
    }

    /// Same with an undone restore (a lineage of its own): the compacted head is dropped and the
    /// restore root's history parent no longer exists.
    @Test
    func undoFromARestoreRedoneAfterCompactionReturnsToTheCompactedHead() throws {
        let directory = try TemporaryDirectory()
        let (store, _, _) = try storeReadyToCompact(directory.file("compact-restore.chrono"))
        defer { try? store.close() }
        let backupStore = try Store.create(at: directory.file("source.chrono"))
        try backupStore.write { try $0.put(bytes("k"), bytes("restored"), in: "c") }
        try backupStore.backup(to: directory.file("backup.chrono"))
        try backupStore.close()
        let restored = try store.restore(fromBackup: directory.file("backup.chrono"))
        try store.undo()
        let headBeforeCompaction = try store.snapshot.head.transaction
        let report = try store.compact()
        #expect(report.pagesMoved > 0)
        let compacted = try store.snapshot.head.transaction
        #expect(try store.redo() == restored)
        var undoneTo: TransactionID?
        #expect(throws: Never.self) { undoneTo = try store.undo() }
        // The head had a root committed on it, so compaction kept it and added its copy as a
        // child: undo from the redone root lands on the head or its copy, reading the same.
        #expect(undoneTo == compacted || undoneTo == headBeforeCompaction)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
        #expect(try isSound(store))
    }

    /// Control: compaction of a head with no history children keeps undo and redo working.
    @Test func compactionKeepsUndoAndRedoOnALinearHistory() throws {
        let directory = try TemporaryDirectory()
        let (store, a, _) = try storeReadyToCompact(directory.file("compact-linear.chrono"))
        defer { try? store.close() }
        let report = try store.compact()
        #expect(report.pagesMoved > 0)
        let compacted = try store.snapshot.head.transaction
        #expect(try store.undo() == a)
        #expect(try store.redo() == compacted)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
        #expect(try isSound(store))
    }

    /// Compaction is maintenance: it must not change what redo does. With the head pinned (here
    /// by an open reader) compaction commits an ordinary child of the head, which counts as a
    /// branching commit: the pending redo is lost, and with `dropsUndoneBranches` the undone
    /// roots are deleted outright.
    @Test
    func compactionWithAnOpenReaderKeepsRedo() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("compact-redo.chrono")
        let (store, _, b) = try storeReadyToCompact(path)
        defer { try? store.close() }
        try store.setRetention(.limitless, dropsUndoneBranches: true)
        try store.undo()
        let reader = try store.beginRead()
        let report = try store.compact()
        reader.close()
        #expect(report.pagesMoved > 0)
        #expect(try store.history(allBranches: true).contains { $0.id == b })
        var redone: TransactionID?
        #expect(throws: Never.self) { redone = try store.redo() }
        #expect(redone != nil)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "b")
    }

    /// Control without an open reader: the head is replaced and redo still reaches `b`.
    @Test func compactionWithoutReadersKeepsRedo() throws {
        let directory = try TemporaryDirectory()
        let (store, _, b) = try storeReadyToCompact(directory.file("compact-redo-free.chrono"))
        defer { try? store.close() }
        try store.setRetention(.limitless, dropsUndoneBranches: true)
        try store.undo()
        try store.compact()
        #expect(try store.history(allBranches: true).contains { $0.id == b })
        #expect(try store.redo() == b)
        #expect(try isSound(store))
    }

    // MARK: - Readers pinned across pruning, compaction and restores

    @Test func aReaderOfAnOldRootSurvivesPruningAndCompaction() throws {
        let directory = try TemporaryDirectory()
        let (store, a, _) = try storeReadyToCompact(directory.file("pinned.chrono"))
        defer { try? store.close() }
        try store.setRetention(.lastRoots(1))
        let reader = try store.beginRead(at: .root(a))
        let expected = try contents(of: reader)
        for round in 0..<20 {
            try store.write { try $0.put(bytes("k"), [UInt8](repeating: UInt8(round), count: 3000), in: "c") }
        }
        try store.prune()
        try store.compact()
        for round in 0..<20 {
            try store.write { try $0.put(bytes("k\(round)"), [UInt8](repeating: UInt8(round), count: 3000), in: "c") }
        }
        #expect(try contents(of: reader) == expected)
        reader.close()
        try store.prune()
        #expect(try isSound(store))
    }

    @Test func aReaderOfTheHeadSurvivesCompactionAndTruncation() throws {
        let directory = try TemporaryDirectory()
        let (store, _, _) = try storeReadyToCompact(directory.file("pinned-head.chrono"))
        defer { try? store.close() }
        try store.setRetention(.lastRoots(1))
        let reader = try store.beginRead()
        let expected = try contents(of: reader)
        try store.write { _ = try $0.dropCollection("high") }
        try store.compact()
        try store.write { try $0.put(bytes("x"), [UInt8](repeating: 9, count: 5000), in: "c") }
        #expect(try contents(of: reader) == expected)
        reader.close()
        try store.compact()
        #expect(try isSound(store))
    }

    // MARK: - Large transactions that spill pages before commit

    @Test func spilledPagesEditedAgainCommitSoundly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("spill.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(3), dirtyPageLimit: 4))
        var expected: [[UInt8]: [UInt8]] = [:]
        try store.write { transaction in
            for round in 0..<3 {
                for index in 0..<400 {
                    let key = bytes("key\(index)")
                    if round == 2 && index % 3 == 0 {
                        _ = try transaction.delete(key, in: "c")
                        expected[key] = nil
                    } else {
                        let value = [UInt8](repeating: UInt8(round), count: index % 50 == 0 ? 9000 : 100 + round)
                        try transaction.put(key, value, in: "c")
                        expected[key] = value
                    }
                }
            }
        }
        #expect(try contents(of: store) == ["c": expected])
        #expect(try isSound(store))
        try store.write { transaction in
            for index in 0..<400 where index % 2 == 0 { _ = try transaction.delete(bytes("key\(index)"), in: "c") }
        }
        try store.close()
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.count(in: "c") } == expected.keys.filter { key in
            let index = Int(String(decoding: key.dropFirst(3), as: UTF8.self))!
            return index % 2 != 0
        }.count)
        #expect(try isSound(reopened))
    }

    // MARK: - Dropped branches, snapshots and reverts

    @Test func droppingAnUndoneBranchKeepsItsSnapshotAndARevertIntoIt() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("branch.chrono"), options: StoreOptions(retention: .lastRoots(3), dropsUndoneBranches: true))
        defer { try? store.close() }
        let base = try store.write { try $0.put(bytes("k"), bytes("base"), in: "c") }.1!
        let b1 = try store.write { try $0.put(bytes("k"), [UInt8](repeating: 1, count: 6000), in: "c") }.1!
        try store.createSnapshot(named: "b1")
        let b2 = try store.write { try $0.put(bytes("j"), [UInt8](repeating: 2, count: 6000), in: "c") }.1!
        let b2Contents = try contents(of: store)
        try store.undo(steps: 2)
        #expect(try store.snapshot.head.transaction == base)
        let reverted = try store.revert(to: b2)
        #expect(try contents(of: store) == b2Contents)
        try store.write { try $0.put(bytes("z"), bytes("z"), in: "c") }
        try store.checkoutSnapshot(named: "b1")
        #expect(try store.read { try $0.value(forKey: bytes("k"), in: "c") } == [UInt8](repeating: 1, count: 6000))
        _ = reverted
        _ = b1
        try store.prune()
        #expect(try isSound(store))
        try store.deleteSnapshot(named: "b1")
        try store.clearHistory()
        #expect(try isSound(store))
    }

    // MARK: - Backups with history of compacted and restored stores

    @Test func historyBackupOfACompactedStoreWithBranches() throws {
        let directory = try TemporaryDirectory()
        let (store, a, _) = try storeReadyToCompact(directory.file("backup-compacted.chrono"))
        defer { try? store.close() }
        try store.revert(to: a)
        try store.undo()
        try store.write { try $0.put(bytes("n"), bytes("new"), in: "c") }
        try store.createSnapshot(named: "s")
        try store.compact()
        let problem = try checkHistoryBackup(of: store)
        #expect(problem == nil, "\(problem ?? "")")
        #expect(try isSound(store))
    }

    /// A history of writes, undos, redos, reverts and a snapshot, and its backup with history:
    /// both stores' listings (all branches) and head lines, with source ids mapped onto the copy's.
    private func historyAndItsBackup() throws -> (source: [HistoryItem], copied: [HistoryItem], mapping: [TransactionID: TransactionID], lines: ([TransactionID?], [TransactionID])) {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("shape.chrono"), options: StoreOptions(retention: .lastRoots(6)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 99)
        for step in 0..<40 {
            let choice = Int.random(in: 0..<10, using: &generator)
            if choice < 5 {
                try store.write(label: "w\(step)") {
                    try $0.put(bytes("k\(Int.random(in: 0..<8, using: &generator))"), [UInt8](repeating: UInt8(step), count: 700), in: "c")
                }
            } else if choice < 7 {
                _ = try? store.undo(steps: Int.random(in: 1...2, using: &generator))
            } else if choice == 7 {
                _ = try? store.redo()
            } else if choice == 8, let target = try store.history(allBranches: true).randomElement(using: &generator) {
                try store.revert(to: target.id, label: "r\(step)")
            } else if try store.snapshots().isEmpty {
                try store.createSnapshot(named: "s\(step)")
            }
        }
        try store.backupWithHistory(to: directory.file("copy.chrono"))
        let copy = try Store.open(at: directory.file("copy.chrono"))
        defer { try? copy.close() }
        let source = try store.history(allBranches: true)
        let copied = try copy.history(allBranches: true)
        // Ids are renumbered in the same order (oldest first), so map by position.
        var mapping: [TransactionID: TransactionID] = [:]
        for (original, duplicate) in zip(source, copied) { mapping[original.id] = duplicate.id }
        return (source, copied, mapping, (try store.history().map { mapping[$0.id] }, try copy.history().map(\.id)))
    }

    /// A backup with history keeps the shape of history, not only contents: every root's history
    /// parent, redo target, branch-tip flag and snapshots map onto the copy.
    @Test func historyBackupKeepsParentsRedoTargetsAndSnapshots() throws {
        let (source, copied, mapping, lines) = try historyAndItsBackup()
        #expect(source.count == copied.count)
        #expect(source.contains { $0.revertedTo != nil })
        for (original, duplicate) in zip(source, copied) {
            #expect(original.parent.flatMap { mapping[$0] } == duplicate.parent, "parent of \(original.id.rawValue)")
            #expect(original.redoTarget.flatMap { mapping[$0] } == duplicate.redoTarget, "redo target of \(original.id.rawValue)")
            #expect(original.isBranchTip == duplicate.isBranchTip, "branch tip \(original.id.rawValue)")
            #expect(original.isHead == duplicate.isHead && original.label == duplicate.label)
            #expect(original.snapshots == duplicate.snapshots)
        }
        #expect(lines.0 == lines.1.map { Optional($0) })
    }

    /// Reverts (and snapshot checkouts) lose what they reverted to: the copied root records no
    /// content source, so the backup's history no longer says "reverted to".
    @Test
    func historyBackupKeepsRevertSources() throws {
        let (source, copied, mapping, _) = try historyAndItsBackup()
        for (original, duplicate) in zip(source, copied) {
            #expect(original.revertedTo.flatMap { mapping[$0] } == duplicate.revertedTo, "revert source of \(original.id.rawValue)")
        }
    }

    // MARK: - Deferred mode

    @Test func deferredCommitsAroundCompactionAndUndoReopenToASyncedState() throws {
        let file = FaultInjectingFile()
        let store = try Store.create(
            in: file, options: StoreOptions(durability: .deferred, checkpointInterval: 3, retention: .lastRoots(2)))
        // States a crash now may reopen to: the newest synced one and every one after it.
        var acceptable: [Contents] = [try contents(of: store)]
        func step(_ body: () throws -> Void) throws {
            let syncs = file.syncCount
            try body()
            let now = try contents(of: store)
            if file.syncCount != syncs { acceptable = [] }
            acceptable.append(now)
        }
        for round in 0..<12 {
            try step { try store.write { try $0.put(bytes("k\(round % 4)"), [UInt8](repeating: UInt8(round), count: 2500), in: "c") } }
            if round % 5 == 4 {
                try step { try store.undo() }
                try step { try store.redo() }
            }
            if round == 7 { try step { try store.compact() } }
        }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<8 {
            let image = file.crashImage(using: &generator)
            let reopened = try Store.open(file: FaultInjectingFile(image: image))
            let recovered = try contents(of: reopened)
            #expect(acceptable.contains(recovered))
            #expect(try isSound(reopened))
            try reopened.close()
        }
    }

    // MARK: - Transaction ids reused after a crash lost unsynced commits

    /// A deferred commit reaches the disk but not its header slot; the crash loses it and the
    /// reopened store reuses its transaction id. The next commit allocates the same pages, so the
    /// lost commit's pages carry exactly the page ids and births the new commit's pages will.
    /// When the new (durable, not yet synced) commit's leaf writes are lost in a second crash but
    /// its slot is not, recovery verifies the stale pages as the new commit's and opens a mix: the
    /// new root with the lost commit's data.
    @Test
    func aLostCommitsPagesAreNeverTakenForANewCommitsPages() throws {
        let pageSize = 4096
        let first = FaultInjectingFile()
        let deferred = try Store.create(
            in: first, options: StoreOptions(pageSize: pageSize, durability: .deferred, checkpointInterval: 100, retention: .limitless))
        try deferred.write(label: "base") { try $0.put(bytes("k"), bytes("base"), in: "c") }
        try deferred.synchronize()
        let synced = first.visibleImage
        let lost = try deferred.write(label: "lost") { try $0.put(bytes("k"), bytes("OLD"), in: "c") }.1!
        // Power loss: every page of the lost commit landed, its header slot did not.
        var afterFirstCrash = first.visibleImage
        afterFirstCrash.replaceSubrange(0..<pageSize, with: synced[0..<pageSize])

        let second = FaultInjectingFile(image: afterFirstCrash)
        let durable = try Store.open(file: second, options: StoreOptions(durability: .durable))
        #expect(text(try durable.read { try $0.value(forKey: bytes("k"), in: "c") }) == "base")
        let retry = try durable.write(label: "new") { try $0.put(bytes("k"), bytes("NEW"), in: "c") }.1!
        #expect(retry != lost, "transaction ids never repeat, not even after a crash lost a commit")
        // Power loss before the sync completed: the slot landed, the leaf page writes did not.
        let written = second.visibleImage
        var afterSecondCrash = written
        var reverted = 0
        for page in 1..<(min(written.count, afterFirstCrash.count) / pageSize) {
            let range = (page * pageSize)..<((page + 1) * pageSize)
            guard written[range] != afterFirstCrash[range], written[range.lowerBound + PageHeader.kindOffset] == PageKind.leaf.rawValue
            else { continue }
            afterSecondCrash.replaceSubrange(range, with: afterFirstCrash[range])
            reverted += 1
        }
        _ = reverted
        let reopened = try Store.open(file: FaultInjectingFile(image: afterSecondCrash))
        defer { try? reopened.close() }
        let value = text(try reopened.read { try $0.value(forKey: bytes("k"), in: "c") })
        let label = try reopened.history().first?.label
        // Acceptable: the last durable commit ("base"), or the new commit whole ("NEW", "new").
        #expect(value == "base" || (value == "NEW" && label == "new"), "reopened to \(value ?? "nil") labelled \(label ?? "nil")")
    }

    /// The same without any earlier crash: an aborted transaction that spilled pages leaves them
    /// on disk under the id the next transaction takes. That transaction makes the same edits with
    /// other values, so it allocates the same pages; if a power loss keeps its header slot but
    /// drops its leaf writes, recovery accepts the aborted transaction's leaves as its own.
    @Test
    func anAbortedTransactionsSpilledPagesNeverReappear() throws {
        let pageSize = 4096
        let file = FaultInjectingFile()
        let store = try Store.create(
            in: file, options: StoreOptions(pageSize: pageSize, durability: .durable, retention: .limitless, dirtyPageLimit: 4))
        try store.write { transaction in
            for index in 0..<3000 { try transaction.put(bytes("k\(index)"), bytes("base-\(index)" + String(repeating: ".", count: 40)), in: "c") }
        }
        let aborted = try store.beginWrite()
        for index in 0..<3000 { try aborted.put(bytes("k\(index)"), bytes("gone-\(index)" + String(repeating: ".", count: 40)), in: "c") }
        aborted.abort()
        let afterAbort = file.visibleImage
        try store.write { transaction in
            for index in 0..<3000 { try transaction.put(bytes("k\(index)"), bytes("kept-\(index)" + String(repeating: ".", count: 40)), in: "c") }
        }
        let written = file.visibleImage
        var crashed = written
        var reverted = 0
        for page in 1..<(min(written.count, afterAbort.count) / pageSize) {
            let range = (page * pageSize)..<((page + 1) * pageSize)
            let identity = (range.lowerBound + PageHeader.pageIDOffset)..<(range.lowerBound + PageHeader.birthOffset + 8)
            // Drop only the writes that left a page of the same identity behind.
            guard written[range] != afterAbort[range], written[identity] == afterAbort[identity],
                written[range.lowerBound + PageHeader.kindOffset] == PageKind.leaf.rawValue
            else { continue }
            crashed.replaceSubrange(range, with: afterAbort[range])
            reverted += 1
        }
        #expect(reverted == 0, "no page of the commit shares an identity with the aborted transaction's pages")
        let reopened = try Store.open(file: FaultInjectingFile(image: crashed))
        defer { try? reopened.close() }
        let values = try reopened.read { try entries($0, "c") }.map { text($0.1) ?? "" }
        #expect(!values.contains { $0.hasPrefix("gone-") }, "an aborted transaction's values were recovered: \(values.prefix(3))")
    }

    // MARK: - Checksummed pages with impossible fields

    /// A root page whose checksum is right but whose inline list count is absurd (a buggy writer
    /// or a crafted file) must give a typed error when opened, not a trap: the size check
    /// multiplies the count by 16 before checking it, and the multiplication overflows.
    @Test
    func aRootWithAnAbsurdListCountIsAnErrorNotATrap() throws {
        let pageSize = 4096
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(pageSize: pageSize))
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let head = try store.snapshot.state.head
        try store.close()
        var image = file.visibleImage
        let start = Int(head.page.rawValue) * pageSize
        let page = PageBuffer(pageSize: pageSize)
        for index in 0..<pageSize { page.bytes[index] = image[start + index] }
        // An inline list (no first chunk) of 2^60 entries.
        page.bytes.storeLittleEndian(UInt64(1) << 60, at: RootRecord.invalidatedOffset)
        page.bytes.storeLittleEndian(UInt64(0), at: RootRecord.invalidatedOffset + 8)
        page.bytes.storeLittleEndian(UInt64(0), at: RootRecord.invalidatedOffset + 16)
        page.seal(kind: .root, page: head.page, birth: head.birth)
        for index in 0..<pageSize { image[start + index] = page.bytes[index] }
        #expect(throws: StoreError.self) {
            let reopened = try Store.open(file: FaultInjectingFile(image: image))
            _ = try reopened.history()
        }
    }

    /// The same for a history entry's merged list: a checksummed history entry that claims an
    /// out-of-line dead list of 2^60 pages. Pruning reads it and must report the page. After one
    /// commit root 1's entry (its redo target changed) lies in the state page's journal.
    /// A count of 2^63 or more read as a negative Int, and re-encoding the entry at the next
    /// commit trapped (structure fuzzer seed 13706092454601014714, once its crafted fields reached
    /// journaled history entries); counts are now bounded as a root page's are.
    @Test(arguments: [UInt64(1) << 60, UInt64(1) << 63 | 5])
    func aHistoryEntryWithAnAbsurdListCountIsAnErrorNotATrap(count: UInt64) throws {
        let pageSize = 4096
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(pageSize: pageSize, retention: .limitless))
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let state = try store.snapshot.stateReference
        try store.close()
        var image = file.visibleImage
        let start = Int(state.page.rawValue) * pageSize
        var page = Array(image[start..<(start + pageSize)])
        // Both roots' entries (root 1's is read by pruning, root 2's, the head's, rewritten by the
        // next commit).
        let found = page.withUnsafeMutableBytes { raw in
            let found = [TransactionID(1), TransactionID(2)].allSatisfy { root in
                PageCrafting.editJournaledHistoryEntry(raw, root: root) { value in
                    // Dead list: `count` entries starting at page 1; neither list owned by the root page.
                    value.storeLittleEndian(count, at: 56)
                    value.storeLittleEndian(UInt64(1), at: 64)
                    value.storeLittleEndian(UInt64(1), at: 72)
                    value.storeLittleEndian(UInt32(0), at: 104)
                }
            }
            PageCrafting.reseal(raw)
            return found
        }
        #expect(found, "the roots' entries are not in the state journal")
        image.replaceSubrange(start..<(start + pageSize), with: page)
        let reopened = try Store.open(file: FaultInjectingFile(image: image))
        defer { try? reopened.close() }
        // Dropping root 1 (the top of the lineage) by the lineage rules frees its one child's dead
        // list. (`clearHistory()` with nothing pinned frees by complement and reads no list.)
        // A commit rewrites the head's entry (its redo target): it must refuse, not trap.
        #expect(throws: StoreError.self) { try reopened.write { try $0.put(bytes("k"), bytes("w"), in: "c") } }
        #expect(throws: StoreError.self) {
            try reopened.setRetention(.lastRoots(1))
            try reopened.prune()
        }
    }

    /// A checksummed catalog leaf whose entry claims 2^63 records: counting converts the stored
    /// UInt64 to Int unchecked and traps instead of reporting the page.
    @Test
    func aCatalogEntryWithAnAbsurdCountIsAnErrorNotATrap() throws {
        let pageSize = 4096
        let file = FaultInjectingFile()
        let store = try Store.create(in: file, options: StoreOptions(pageSize: pageSize))
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let catalog = try store.snapshot.head.catalog
        try store.close()
        var image = file.visibleImage
        let start = Int(catalog.page.rawValue) * pageSize
        let page = PageBuffer(pageSize: pageSize)
        for offset in 0..<pageSize { page.bytes[offset] = image[start + offset] }
        let leaf = NodeLayout.decodeLeaf(page)
        guard case .inline(var value) = leaf.values[0] else { Issue.record("entry not inline"); return }
        value.withUnsafeMutableBytes { $0.storeLittleEndian(UInt64(1) << 63, at: 16) }
        leaf.values[0] = .inline(value)
        let rewritten = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(leaf, into: rewritten)
        rewritten.seal(kind: .leaf, page: catalog.page, birth: catalog.birth, count: leaf.keys.count)
        for offset in 0..<pageSize { image[start + offset] = rewritten.bytes[offset] }
        let reopened = try Store.open(file: FaultInjectingFile(image: image))
        defer { try? reopened.close() }
        #expect(throws: StoreError.self) { _ = try reopened.read { try $0.count(in: "c") } }
    }

    // MARK: - Crashes at every operation of compaction around undo, reverts and readers

    /// A fixed workload (commits, undo, a revert, compaction with and without an open reader, a
    /// prune) crashed after every file operation: the reopened store holds a state from the last
    /// synced step onwards (or the step under way), verifies sound, and accepts a commit.
    @Test(arguments: [Durability.durable, .deferred])
    func crashesAroundCompactionReopenToAnAcceptableState(durability: Durability) throws {
        let simulator = CrashSimulator(durability: durability, retention: .limitless)
        // Contents after each step, and whether the step ended with every commit durable.
        final class Progress {
            var states: [Contents] = [[:]]
            var lastSynced = 0
        }
        func workload(_ store: Store, _ file: FaultInjectingFile, _ progress: Progress) throws {
            func step(_ body: () throws -> Void) throws {
                let syncs = file.syncCount
                try body()
                progress.states.append(normalized(try contents(of: store)))
                if file.syncCount != syncs || durability == .durable { progress.lastSynced = progress.states.count - 1 }
            }
            try step {
                try store.write { transaction in
                    for index in 0..<120 { try transaction.put(bytes("low\(index)"), [UInt8](repeating: 1, count: 600), in: "low") }
                }
            }
            try step {
                try store.write { transaction in
                    for index in 0..<120 { try transaction.put(bytes("high\(index)"), [UInt8](repeating: 2, count: 600), in: "high") }
                }
            }
            try step { try store.write { _ = try $0.dropCollection("low") } }
            try step { try store.clearHistory() }
            try step { try store.write(label: "a") { try $0.put(bytes("k"), bytes("a"), in: "c") } }
            try step { try store.write(label: "b") { try $0.put(bytes("k"), bytes("b"), in: "c") } }
            try step { try store.revert(to: store.history()[1].id) }
            try step { try store.undo() }
            try step { try store.compact() }
            let reader = try store.beginRead()
            try step { try store.write { try $0.put(bytes("k"), bytes("c"), in: "c") } }
            try step { try store.undo() }
            try step { try store.compact() }
            reader.close()
            try step { try store.prune() }
            try step { try store.compact() }
        }
        let total = try simulator.operationCount { store, file in try workload(store, file, Progress()) }
        let complete = Progress()
        _ = try simulator.run(crashAfter: nil) { store, file in try workload(store, file, complete) }
        var failures: [String] = []
        for crashAfter in 0..<total where failures.isEmpty {
            let progress = Progress()
            let run = try simulator.run(crashAfter: crashAfter) { store, file in try workload(store, file, progress) }
            var generator = SeededGenerator(seed: UInt64(crashAfter) &+ 1)
            let image = run.file.crashImage(using: &generator)
            do {
                let reopened = try Store.open(file: FaultInjectingFile(image: image), options: simulator.options)
                let recovered = normalized(try contents(of: reopened))
                // From the last synced step on, or the step under way (which may have completed).
                var acceptable = Array(progress.states[progress.lastSynced...])
                if progress.states.count < complete.states.count { acceptable.append(complete.states[progress.states.count]) }
                if !acceptable.contains(recovered) {
                    failures.append("crash after \(crashAfter) of \(total): reopened to an unexpected state")
                }
                let report = try reopened.verify()
                if !report.isSound || report.leakedPageCount != 0 { failures.append("crash after \(crashAfter): \(report)") }
                try reopened.write { try $0.put(bytes("after"), bytes("crash"), in: "c") }
                try reopened.close()
            } catch {
                failures.append("crash after \(crashAfter) of \(total): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
    }

    // MARK: - Randomized: options the shared workloads leave at their defaults

    /// The shared random workload with undone branches dropped at once, one history entry pruned
    /// per commit, tiny spill limits, and readers held open on random retained roots across steps.
    @Test(arguments: [Durability.durable, .deferred])
    func randomHistoryWithDroppedBranchesSpillsAndLongReaders(durability: Durability) throws {
        let seed = SeededGenerator.seed()
        var seeds = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let backup = try CrashRecoveryTests.makeBackup(in: directory)
        for run in 0..<10 {
            let retention = [RetentionPolicy.lastRoots(2), .lastRoots(4), .limitless][run % 3]
            let file = FaultInjectingFile()
            let store = try Store.create(
                in: file,
                options: StoreOptions(
                    durability: durability, checkpointInterval: 3, pruneBatchLimit: 1, retention: retention,
                    dropsUndoneBranches: true, dirtyPageLimit: 8))
            let workload = RandomWorkload(seed: seeds.next(), stepCount: 30, backup: backup)
            let record = WorkloadRecord()
            var readers: [(ReadTransaction, Contents)] = []
            var failure: String?
            var generator = SeededGenerator(seed: workload.seed)
            try workload.run(on: store, file: file, record: record) { store in
                guard failure == nil else { return }
                for (reader, expected) in readers where try normalized(contents(of: reader)) != expected {
                    failure = "a reader of root \(reader.snapshot.head.transaction.rawValue) reads differently"
                }
                if readers.count > 2 || Bool.random(using: &generator) {
                    if let (reader, _) = readers.first { reader.close(); readers.removeFirst() }
                }
                let items = try store.history(allBranches: true)
                if let item = items.randomElement(using: &generator), let expected = record.contentsByRoot[item.id] {
                    readers.append((try store.beginRead(at: .root(item.id)), expected))
                }
                if failure == nil, let problem = try checkRetainedRoots(store, record) { failure = problem }
            }
            for (reader, _) in readers { reader.close() }
            if failure == nil, let problem = try checkHistoryBackup(of: store) { failure = problem }
            #expect(failure == nil, "seed \(seed), workload \(workload.seed), \(retention): \(failure ?? "")")
            if failure != nil { return }
        }
    }

    // MARK: - Two deferred opens of one store taking turns

    /// Two opens of one file (as two processes), both deferred, alternate commits, undo, redo,
    /// prunes and snapshots while each holds readers on old roots. Every reader keeps reading what
    /// it started with, each open sees the other's commits, and the file stays sound.
    @Test func twoDeferredOpensTakingTurnsStaySound() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("turns.chrono")
        let options = StoreOptions(durability: .deferred, checkpointInterval: 3, retention: .lastRoots(2), dropsUndoneBranches: true)
        let first = try Store.create(at: path, options: options)
        let second = try Store.open(at: path, options: options)
        var generator = SeededGenerator(seed: 42)
        var readers: [(ReadTransaction, Contents)] = []
        var model: Contents = [:]
        for step in 0..<120 {
            let store = Bool.random(using: &generator) ? first : second
            let choice = Int.random(in: 0..<10, using: &generator)
            if choice < 6 {
                let key = bytes("k\(Int.random(in: 0..<20, using: &generator))")
                let value = [UInt8](repeating: UInt8(step % 256), count: Int.random(in: 1..<3000, using: &generator))
                try store.write { try $0.put(key, value, in: "c") }
            } else if choice == 6 {
                _ = try? store.undo()
            } else if choice == 7 {
                _ = try? store.redo()
            } else if choice == 8 {
                try store.prune()
            } else {
                try store.synchronize()
            }
            model = try contents(of: store)
            #expect(try contents(of: first) == model, "step \(step)")
            #expect(try contents(of: second) == model, "step \(step)")
            for (reader, expected) in readers {
                #expect(try contents(of: reader) == expected, "step \(step): reader of \(reader.snapshot.head.transaction.rawValue)")
            }
            if readers.count > 3 { readers.removeFirst().0.close() }
            let other = store === first ? second : first
            let reader = try other.beginRead()
            readers.append((reader, try contents(of: reader)))
        }
        for (reader, _) in readers { reader.close() }
        #expect(try isSound(first))
        try first.close()
        #expect(try isSound(second))
        try second.close()
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try contents(of: reopened) == model)
        #expect(try isSound(reopened))
    }

    // MARK: - Two opens of one store (as two processes would): refresh while the other commits

    /// One open store commits as fast as it can (keeping one root, so every commit frees and
    /// reuses pages); another open of the same file starts reads meanwhile. Adopting the other's
    /// newest state reads its state page and head root before anything pins them: a commit or two
    /// later those pages may hold something else, and the read must not fail as if damaged.
    @Test func readsInOneOpenWhileAnotherCommitsNeverFail() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("two.chrono")
        let writer = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(1)))
        try writer.write { try $0.put(bytes("k"), bytes("0"), in: "c") }
        let readerStore = try Store.open(at: path, options: StoreOptions(retention: .lastRoots(1)))
        let done = DispatchGroup()
        let errors = ErrorBox()
        done.enter()
        DispatchQueue.global().async {
            defer { done.leave() }
            do {
                for round in 1...2000 {
                    try writer.write { try $0.put(bytes("k"), bytes("\(round)"), in: "c") }
                }
            } catch { errors.add("writer: \(error)") }
        }
        let reads = Counter()
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            while done.wait(timeout: .now()) == .timedOut {
                do {
                    let value = try readerStore.read { try $0.value(forKey: bytes("k"), in: "c") }
                    if value == nil { errors.add("reader saw no value") }
                    reads.increment()
                } catch {
                    errors.add("reader: \(error)")
                }
            }
        }
        try readerStore.close()
        try writer.close()
        #expect(reads.value > 0)
        #expect(errors.all.isEmpty, "\(errors.all.prefix(5))")
    }
}

private final class ErrorBox: @unchecked Sendable {
    private let lock = Lock()
    private var messages: [String] = []
    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}

private final class Counter: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
