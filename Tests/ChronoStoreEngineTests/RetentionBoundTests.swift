// Retention bounds what is kept for any sequence of commits, undos, redos, reverts and checkouts.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// Whether `lastRoots(count)` keeps more than it promises: at most `count` roots besides snapshot
/// roots, `readerRoots` and the redo chain, plus lineage fork points where two kept roots' page
/// lineages meet (at most one per pinned root outside the undo window, and one per revert in
/// it: a revert derives its trees from an older root, so the lineage forks there).
func rootsBeyondTheBound(_ store: Store, count: Int, readerRoots: Set<TransactionID>) throws -> String? {
    let all = try store.history(allBranches: true)
    let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
    let window = Set(try store.history().prefix(count).map(\.id))
    var redoChain = Set<TransactionID>()
    var cursor = try store.snapshot.head.transaction
    while let next = byID[cursor]?.redoTarget, !redoChain.contains(next), !window.contains(next) {
        redoChain.insert(next)
        cursor = next
    }
    let pinned = Set(try store.snapshots().map(\.root)).union(readerRoots)
    let counted = all.map(\.id).filter { !redoChain.contains($0) && !pinned.contains($0) }
    let forkAllowance = pinned.subtracting(window).count + all.filter { window.contains($0.id) && $0.revertedTo != nil }.count
    guard counted.count > count + forkAllowance else { return nil }
    return "retained \(all.map(\.id.rawValue)), window \(window.map(\.rawValue).sorted()), redo chain \(redoChain.map(\.rawValue).sorted()), pinned \(pinned.map(\.rawValue).sorted()), fork allowance \(forkAllowance)"
}

/// Every retained root's links, for a failure message.
func describeLineage(_ store: Store) throws -> String {
    let snapshot = try store.snapshot
    let trees = HistoryTrees(state: snapshot.state)
    let reader = try store.beginRead()
    defer { reader.close() }
    var lines = ["head \(snapshot.head.transaction.rawValue), prune cursor \(snapshot.state.pruneCursor.rawValue)"]
    for item in try store.history(allBranches: true) {
        guard let entry = try trees.entry(item.id, reader: reader.treeReader) else { continue }
        let children = try trees.lineageChildren(of: item.id, reader: reader.treeReader).map(\.rawValue)
        lines.append(
            "root \(item.id.rawValue): depth \(entry.depth), history parent \(entry.historyParent.rawValue), "
                + "lineage parent \(entry.lineageParent.rawValue), redo \(entry.redoTarget.rawValue), lineage children \(children)")
    }
    return lines.joined(separator: "\n")
}

@Suite("Retention bounds")
struct RetentionBoundTests {
    @Test func putThenUndoCyclesUnderLastNKeepAtMostNRootsAndTheFileStopsGrowing() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("cycles.chrono"), options: StoreOptions(retention: .lastRoots(5)))
        defer { try? store.close() }
        for index in 0..<10 { try store.write { try $0.put(bytes("k"), bytes("base \(index)"), in: "c") } }
        var pageCountAfterWarmUp: UInt64 = 0
        for cycle in 0..<150 {
            try store.write { try $0.put(bytes("k"), bytes(String(repeating: "preview \(cycle) ", count: 40)), in: "c") }
            try store.undo()
            if cycle == 20 { pageCountAfterWarmUp = try store.snapshot.state.pageCount }
        }
        // Five in the undo window, one undone preview (the redo chain).
        let retained = try store.history(allBranches: true)
        #expect(retained.count <= 6)
        #expect(try store.snapshot.state.retainedRootCount == UInt64(retained.count))
        let pageCount = try store.snapshot.state.pageCount
        #expect(pageCount <= pageCountAfterWarmUp + 8)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "base 9")
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func randomSequencesUnderLastNNeverKeepMoreThanTheBound() throws {
        let seed = SeededGenerator.seed()
        print("RetentionBoundTests seed: \(seed)")
        try checkRandomSequences(seed: seed, runs: Environment.soakEnabled ? 60 : 6)
    }

    /// Regression (CI, 2026-12-03): a revert's source that was also a fork point (its other child
    /// pinned by a reader) was deeper than the revert root after it in commit order, and automatic
    /// pruning stopped its walk at the source, keeping the expired revert root beyond the bound.
    @Test func aRevertSourceThatIsAForkPointDoesNotStopPruning() throws {
        try checkRandomSequences(seed: 7691883625548705160, runs: 3)
    }

    private func checkRandomSequences(seed: UInt64, runs: Int) throws {
        var random = SeededGenerator(seed: seed)
        for run in 0..<runs {
            let count = Int.random(in: 1...5, using: &random)
            let directory = try TemporaryDirectory()
            let store = try Store.create(
                at: directory.file("model.chrono"), options: StoreOptions(retention: .lastRoots(count)))
            defer { try? store.close() }
            var model = RetentionModel()
            var operations: [String] = []
            for step in 0..<80 {
                operations.append(try model.step(store, random: &random))
                let operation = operations.suffix(12).joined(separator: "; ")
                let excess = try rootsBeyondTheBound(store, count: count, readerRoots: model.readerRoots)
                #expect(excess == nil, "seed \(seed) run \(run) step \(step) (\(operation), last:\(count)): \(excess ?? "")")
                if let problem = try model.check(store) {
                    Issue.record("seed \(seed) run \(run) step \(step) (\(operation)): \(problem)")
                }
                if excess != nil {
                    print("after \(operations): \(try describeLineage(store))")
                    return
                }
            }
            model.closeReaders()
            let report = try store.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed) run \(run): \(report)")
        }
    }

    @Test func pruningSkipsAThousandSnapshotsAndStillFreesEveryExpiredRoot() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("snapshots.chrono"), options: StoreOptions(durability: .deferred, retention: .lastRoots(10)))
        defer { try? store.close() }
        for index in 0..<1000 {
            try store.write { try $0.put(bytes("k\(index % 50)"), bytes("value \(index)"), in: "c") }
            try store.createSnapshot(named: "s\(index)")
        }
        let pagesWithSnapshots = try store.snapshot.state.pageCount
        for index in 0..<2000 { try store.write { try $0.put(bytes("k\(index % 50)"), bytes("later \(index)"), in: "c") } }
        // In deferred mode the last synced head is kept (a crash falls back to it): sync first.
        try store.synchronize()
        try store.write { try $0.put(bytes("k"), bytes("synced"), in: "c") }
        // 1,000 snapshot roots and the last ten: nothing else, and the file barely grew.
        let retainedCount = try store.snapshot.state.retainedRootCount
        #expect(retainedCount == 1010)
        let pageCount = try store.snapshot.state.pageCount
        // Deferred mode reuses freed pages once synced (every 64 commits): a few hundred pages of
        // slack; without pruning, 2,000 kept roots would have added thousands.
        #expect(pageCount < pagesWithSnapshots + 1000)
        // Deleting snapshots lets their roots go at once, though pruning's cursor is past them.
        for index in 0..<500 { try store.deleteSnapshot(named: "s\(index)") }
        #expect(try store.snapshot.state.retainedRootCount == 510)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func commitsDoNotReadTheSnapshotTree() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("tree.chrono")
        // A tiny cache, so that a commit reading the snapshot tree would read it from the file.
        let store = try Store.create(at: path, options: StoreOptions(cacheByteCount: 1, retention: .lastRoots(5)))
        defer { try? store.close() }
        for index in 0..<300 {
            try store.write { try $0.put(bytes("k\(index % 20)"), bytes("value \(index)"), in: "c") }
            try store.createSnapshot(named: String(repeating: "snapshot \(index) ", count: 4))
        }
        let tree = try store.snapshot.state.snapshots
        // Damage the snapshot tree's root page on disk; a commit that reads it would fail.
        try RawFile.flipByte(in: path, at: tree.page.rawValue * UInt64(store.pageSize) + 100)
        for index in 0..<200 {
            try store.write { try $0.put(bytes("other \(index)"), bytes(String(repeating: "x", count: 500)), in: "d") }
        }
        #expect(try store.snapshot.state.retainedRootCount == 305)
        #expect(throws: StoreError.self) { try store.snapshots() }
    }

    @Test func aSnapshotDeletedWhileItsRootIsTheHeadLetsTheRootGoLater() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("head.chrono"), options: StoreOptions(retention: .lastRoots(2)))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }
        try store.write { try $0.put(bytes("k"), bytes("2"), in: "c") }
        try store.createSnapshot(named: "s")
        // Pruning steps over the snapshot root, and its cursor moves past it.
        try store.write { try $0.put(bytes("k"), bytes("3"), in: "c") }
        try store.write { try $0.put(bytes("k"), bytes("4"), in: "c") }
        try store.undo(steps: 2)
        try store.deleteSnapshot(named: "s")
        try store.redo()
        try store.redo()
        let last = try (0..<3).map { index in try store.write { try $0.put(bytes("k"), bytes("after \(index)"), in: "c") }.1! }
        #expect(try store.history(allBranches: true).map(\.id) == [last[2], last[1]])
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func aReaderHoldingAnOldRootDoesNotStallPruningOfNewerRoots() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("reader.chrono"), options: StoreOptions(retention: .lastRoots(3)))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("old"), in: "c") }
        let reader = try store.beginRead()
        for index in 0..<100 { try store.write { try $0.put(bytes("k"), bytes("new \(index)"), in: "c") } }
        // The reader's root, the root before it (a fork point of nothing: the top of the lineage
        // is dropped into it) and the three newest.
        #expect(try store.snapshot.state.retainedRootCount <= 5)
        #expect(text(try reader.value(forKey: bytes("k"), in: "c")) == "old")
        reader.close()
        try store.write { try $0.put(bytes("k"), bytes("last"), in: "c") }
        #expect(try store.snapshot.state.retainedRootCount == 3)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func aForkPointBehindTheCursorGoesWhenItsLastOtherBranchGoes() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("fork.chrono"), options: StoreOptions(retention: .lastRoots(2)))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("a"), in: "c") }
        try store.write { try $0.put(bytes("k"), bytes("b"), in: "c") }
        try store.createSnapshot(named: "side")
        try store.undo()
        // The snapshot keeps the undone root; its parent becomes a fork point.
        for index in 0..<20 { try store.write { try $0.put(bytes("k"), bytes("main \(index)"), in: "c") } }
        #expect(try store.snapshot.state.retainedRootCount == 4)
        try store.deleteSnapshot(named: "side")
        #expect(try store.snapshot.state.retainedRootCount == 2)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }
}

/// A model of what each root holds (one key), driven by random history operations.
struct RetentionModel {
    private var contents: [TransactionID: String] = [:]
    private var readers: [(ReadTransaction, TransactionID)] = []
    private var snapshotNames: [String] = []
    private var nextValue = 0

    /// Roots of readers closed since the last commit: pruning lets them go at the next commit.
    private var released: Set<TransactionID> = []

    /// Roots readers hold, or held until after the last commit.
    var readerRoots: Set<TransactionID> { Set(readers.map(\.1)).union(released) }

    /// Runs one random operation; returns its name.
    mutating func step(_ store: Store, random: inout SeededGenerator) throws -> String {
        let rootsBefore = try store.snapshot.state.transaction
        let operation = try randomOperation(store, random: &random)
        let made = try store.history().first.map { $0.id > rootsBefore } ?? false
        if made { released.removeAll() }
        return operation
    }

    private mutating func randomOperation(_ store: Store, random: inout SeededGenerator) throws -> String {
        let retained = try store.history(allBranches: true).map(\.id)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40:
            nextValue += 1
            let value = "v\(nextValue)"
            let id = try store.write { try $0.put(bytes("k"), bytes(value), in: "c") }.1!
            contents[id] = value
            return "commit \(id.rawValue)"
        case 40..<55:
            let steps = Int.random(in: 1...3, using: &random)
            do { try store.undo(steps: steps) } catch StoreError.cannotUndo {}
            return "undo \(steps)"
        case 55..<65:
            do { try store.redo() } catch StoreError.cannotRedo {}
            return "redo"
        case 65..<73:
            let target = retained.randomElement(using: &random)!
            let id = try store.revert(to: target)
            contents[id] = contents[target]
            return "revert to \(target.rawValue) as \(id.rawValue)"
        case 73..<80:
            nextValue += 1
            let name = "s\(nextValue)"
            try store.createSnapshot(named: name)
            snapshotNames.append(name)
            return "snapshot \(name)"
        case 80..<86:
            guard !snapshotNames.isEmpty else { return "nothing" }
            let name = snapshotNames.remove(at: Int.random(in: 0..<snapshotNames.count, using: &random))
            try store.deleteSnapshot(named: name)
            return "delete snapshot \(name)"
        case 86..<91:
            guard let name = snapshotNames.randomElement(using: &random) else { return "nothing" }
            let source = try #require(try store.snapshots().first { $0.name == name }).root
            let id = try store.checkoutSnapshot(named: name)
            contents[id] = contents[source]
            return "checkout \(name) as \(id.rawValue)"
        case 91..<96:
            let target = retained.randomElement(using: &random)!
            readers.append((try store.beginRead(at: .root(target)), target))
            return "open reader at \(target.rawValue)"
        default:
            guard !readers.isEmpty else { return "nothing" }
            let (reader, root) = readers.remove(at: Int.random(in: 0..<readers.count, using: &random))
            reader.close()
            released.insert(root)
            return "close a reader"
        }
    }

    /// Whether every retained root and every open reader reads as the model says.
    func check(_ store: Store) throws -> String? {
        for item in try store.history(allBranches: true) {
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            let found = text(try reader.value(forKey: bytes("k"), in: "c"))
            if found != contents[item.id] { return "root \(item.id.rawValue) reads \(found ?? "nothing")" }
        }
        for (reader, root) in readers where text(try reader.value(forKey: bytes("k"), in: "c")) != contents[root] {
            return "a reader of root \(root.rawValue) reads differently"
        }
        return nil
    }

    mutating func closeReaders() {
        for (reader, _) in readers { reader.close() }
        readers.removeAll()
    }
}
