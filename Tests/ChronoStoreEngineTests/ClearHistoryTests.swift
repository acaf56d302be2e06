// clearHistory() that keeps only the head frees by complement: exactly what dropping root by root frees.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Clear history")
struct ClearHistoryTests {
    /// Commits, undos, redos, reverts and large values, the same for every store given the seed.
    static func makeHistory(_ store: Store, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        for step in 0..<120 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                try store.write { transaction in
                    for _ in 0..<Int.random(in: 1...8, using: &random) {
                        let size = Int.random(in: 0..<20, using: &random) == 0 ? 9000 : Int.random(in: 1...300, using: &random)
                        try transaction.put(bytes("k\(Int.random(in: 0..<60, using: &random))"), random.bytes(size), in: "c\(step % 2)")
                    }
                    if step % 5 == 0 { _ = try transaction.delete(bytes("k\(step % 60)"), in: "c0") }
                }
            case 6: _ = try? store.undo(steps: Int.random(in: 1...3, using: &random))
            case 7: _ = try? store.redo()
            case 8:
                let roots = try store.history(allBranches: true).map(\.id)
                try store.revert(to: roots[Int.random(in: 0..<roots.count, using: &random)])
            default: try store.write { try $0.put(bytes("small"), bytes("\(step)"), in: "c1") }
            }
        }
    }

    @Test func clearingToTheHeadFreesExactlyWhatDroppingRootByRootFrees() throws {
        let seed = SeededGenerator.seed()
        print("ClearHistoryTests seed \(seed)")
        try Self.clearBothWays(seed: seed, rootByRootGapIsCertain: false)
    }

    /// A known gap, pinned by the seed that found it (fifteenth session): with something pinned,
    /// clearing drops root by root, and a branch tip whose dead list holds a packed version that
    /// is a delta against the tip's own page cannot be dropped when that version's keyframe is
    /// larger than a pack page (a nearly full leaf of incompressible values); the fork point above
    /// the tip stays with it (Docs/RootChain.md, "When pruning runs", the `clearHistory()` rows).
    /// The store stays sound and reads as before; only more history than asked is kept. When this
    /// is fixed the known issue is no longer recorded and this test fails: make it a plain
    /// regression test.
    @Test func rootByRootClearingKeepsATipWhosePackedDependantFitsNoPackPage() throws {
        try Self.clearBothWays(seed: 16_204_776_515_048_056_243, rootByRootGapIsCertain: true)
    }

    /// Clears the same history by complement and (a snapshot of the head pinning it) root by root,
    /// and compares. The root-by-root clear's "only the head is left" is checked as a known issue
    /// (see ``rootByRootClearingKeepsATipWhosePackedDependantFitsNoPackPage()``); everything else
    /// strictly.
    static func clearBothWays(seed: UInt64, rootByRootGapIsCertain: Bool) throws {
        let directory = try TemporaryDirectory()
        var outcomes: [(free: UInt64, count: UInt64, contents: Contents, roots: Int)] = []
        for byComplement in [true, false] {
            let store = try Store.create(
                at: directory.file("clear-\(byComplement).chrono"), options: StoreOptions(retention: .limitless))
            defer { try? store.close() }
            try Self.makeHistory(store, seed: seed)
            // A snapshot of the head pins a root, which sends clearing down the root-by-root path.
            if !byComplement { _ = try store.createSnapshot(named: "head") }
            let before = try contents(of: store)
            let dropped = try store.clearHistory()
            #expect(dropped > 0, "seed \(seed)")
            let report = try store.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report.problems)")
            #expect(try contents(of: store) == before, "seed \(seed)")
            let roots = try store.history(allBranches: true)
            if byComplement {
                #expect(roots.count == 1, "seed \(seed)")
            } else {
                withKnownIssue(
                    "root by root, a tip whose packed dependant fits no pack page stays", isIntermittent: !rootByRootGapIsCertain
                ) {
                    #expect(roots.count == 1, "seed \(seed): kept \(roots.map(\.id))")
                }
            }
            let state = try store.snapshot.state
            outcomes.append((state.freePageCount, state.pageCount, before, roots.count))
            // The store goes on: commits, undo back to the cleared head, pruning, reopening.
            try store.write { try $0.put(bytes("after"), bytes("clear"), in: "c0") }
            try store.undo()
            #expect(try contents(of: store) == before, "seed \(seed)")
            #expect(try store.verify().isSound, "seed \(seed)")
        }
        // Both keep the same pages in use (the twin's snapshot tree adds one); the root-by-root
        // path may have written more pages on the way (merged lists), so its file can be longer.
        // Roots the root-by-root clear could not drop keep their pages too.
        let live = outcomes.map { $0.count - 1 - $0.free }
        #expect(outcomes[0].contents == outcomes[1].contents)
        if outcomes[1].roots == 1 {
            #expect(live[1] == live[0] + 1, "seed \(seed): live pages \(live)")
        } else {
            #expect(live[1] > live[0] + 1, "seed \(seed): live pages \(live) with \(outcomes[1].roots) roots kept")
        }
    }

    /// Regression: clearing by complement freed the list chunks of the head's own root page (a
    /// commit that replaced more pages than its root page holds inline).
    @Test func aHeadWhoseRootPageKeepsItsListsInChunksKeepsThemThroughAClear() throws {
        let directory = try TemporaryDirectory()
        var random = SeededGenerator(seed: 12)
        let store = try Store.create(at: directory.file("chunks.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let keys = (0..<4_000).map { _ in random.bytes(24) }
        try store.write { transaction in for key in keys { try transaction.put(key, random.bytes(150), in: "data") } }
        try store.write { transaction in for key in keys.prefix(3_000) { try transaction.put(key, random.bytes(150), in: "data") } }
        let head = try #require(try store.history().first)
        #expect(head.pagesChanged > 300, "the head's lists do not fit its root page")
        try store.clearHistory()
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report.problems)")
        try store.compact()
        #expect(try store.verify().isSound)
    }

    @Test func clearingTwiceAndReopeningLeavesASoundStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("twice.chrono")
        var store = try Store.create(at: path, options: StoreOptions(retention: .limitless))
        try Self.makeHistory(store, seed: 7)
        try store.clearHistory()
        #expect(try store.clearHistory() == 0)
        try store.close()
        store = try Store.open(at: path)
        defer { try? store.close() }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report.problems)")
        try Self.makeHistory(store, seed: 8)
        try store.clearHistory()
        #expect(try store.verify().isSound)
    }
}
