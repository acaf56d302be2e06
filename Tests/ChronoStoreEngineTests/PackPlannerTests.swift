// The pack planner (entries encoded in the background while a commit syncs) changes nothing that
// packing writes: the same history makes the same file with the planner on and off.
import Foundation
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Pack planner")
struct PackPlannerTests {
    /// A clock that advances one second per reading, the same in every store that uses its own.
    private final class SteppingClock: @unchecked Sendable {
        private let lock = Lock()
        private var now: Int64 = 1_800_000_000_000
        func read() -> Int64 {
            lock.withLock {
                now += 1_000
                return now
            }
        }
    }

    /// Runs one seeded history (puts, deletes and large values in two collections, undo, redo,
    /// snapshots, prune) on a new store at `path` and returns the store, still open.
    private func runHistory(
        at path: String, seed: UInt64, retention: RetentionPolicy, plansPacking: Bool, waitsEveryOther: Bool
    ) throws -> Store {
        let clock = SteppingClock()
        var options = StoreOptions(durability: .durable, retention: retention)
        options.packing = eagerPacking
        options.plansPacking = plansPacking
        options.clock = WallClock { clock.read() }
        let store = try Store.create(at: path, options: options)
        var generator = SeededGenerator(seed: seed)
        var snapshots: [String] = []
        for step in 0..<160 {
            // Half the time the planner has finished before the next commit; otherwise packing
            // may find a plan still being made (then it encodes the entries itself).
            if waitsEveryOther, step % 2 == 0 { store.packPlanner.waitUntilIdle() }
            let choice = Int.random(in: 0..<100, using: &generator)
            if choice < 72 || step < 10 {
                try store.write { transaction in
                    for _ in 0..<Int.random(in: 1...8, using: &generator) {
                        let collection = Bool.random(using: &generator) ? "a" : "b"
                        let key = bytes("key\(Int.random(in: 0..<400, using: &generator))")
                        if Int.random(in: 0..<10, using: &generator) == 0 {
                            _ = try transaction.delete(key, in: collection)
                        } else {
                            // Now and then a value large enough for overflow pages (not packed).
                            let size = Int.random(in: 0..<20, using: &generator) == 0 ? 6_000 : Int.random(in: 10...300, using: &generator)
                            try transaction.put(key, generator.bytes(size), in: collection)
                        }
                    }
                }
            } else if choice < 82 {
                if try store.history().count > 1 { _ = try store.undo() }
            } else if choice < 88 {
                if try store.history().first?.redoTarget != nil { _ = try store.redo() }
            } else if choice < 94 {
                if let name = snapshots.first, Bool.random(using: &generator) {
                    try store.deleteSnapshot(named: name)
                    snapshots.removeFirst()
                } else {
                    let name = "s\(step)"
                    _ = try store.createSnapshot(named: name)
                    snapshots.append(name)
                }
            } else {
                _ = try store.prune()
            }
        }
        return store
    }

    /// Every entry the planner made is the one packing would encode for that page of that root
    /// (the same base, delta and checksum), and a page that is no leaf or branch is marked so.
    /// Packing is kept from reaching the roots (a window past the test), so their plans wait.
    @Test func everyPlannedEntryIsTheEntryPackingWouldEncode() throws {
        let seed = SeededGenerator.seed()
        print("PackPlannerTests.everyPlannedEntry seed: \(seed)")
        let directory = try TemporaryDirectory()
        var options = StoreOptions(durability: .durable, retention: .limitless)
        options.packing = HistoryPacking(window: 500, batchRoots: 1)
        let store = try Store.create(at: directory.file("store.chrono"), options: options)
        var generator = SeededGenerator(seed: seed)
        var roots: [TransactionID] = []
        for round in 0..<40 {
            let (_, root) = try store.write { transaction in
                for _ in 0..<Int.random(in: 1...12, using: &generator) {
                    let collection = Bool.random(using: &generator) ? "a" : "b"
                    let key = bytes("key\(Int.random(in: 0..<600, using: &generator))")
                    // Now and then a value large enough for overflow pages (never packed).
                    let size = Int.random(in: 0..<12, using: &generator) == 0 ? 6_000 : Int.random(in: 10...300, using: &generator)
                    try transaction.put(key, generator.bytes(size), in: collection)
                }
            }
            store.packPlanner.waitUntilIdle()
            if round > 0, let root { roots.append(root) }
        }
        var compared = (leaves: 0, branches: 0, other: 0)
        struct Discard: Error {}
        do {
            _ = try store.write { transaction in
                let trees = HistoryTrees(state: transaction.base.state)
                for root in roots {
                    guard let plan = store.packPlanner.plan(for: root), let entry = try trees.entry(root, reader: transaction) else {
                        Issue.record("seed \(seed): no plan for root \(root)")
                        continue
                    }
                    let dead = try transaction.deadList(of: entry)
                    let new = try transaction.newList(of: entry)
                    #expect(plan.dead == dead && plan.new == new, "seed \(seed): root \(root)'s lists")
                    let bases = try BaseCandidates(new, reader: transaction.treeReader)
                    for reference in dead {
                        let page = try transaction.treeReader.read(reference, kind: nil, cached: false)
                        switch plan.pages[reference] {
                        case .notTreePage?:
                            #expect(page.kindByte != PageKind.leaf.rawValue && page.kindByte != PageKind.branch.rawValue)
                            compared.other += 1
                        case .entry(let planned, let isLeaf)?:
                            let expected = transaction.makeEntry(page, base: bases.base(for: page))
                            #expect(planned == expected, "seed \(seed): root \(root), page \(reference)")
                            #expect(isLeaf == (page.kindByte == PageKind.leaf.rawValue))
                            if isLeaf { compared.leaves += 1 } else { compared.branches += 1 }
                        case nil:
                            Issue.record("seed \(seed): root \(root)'s plan lacks \(reference)")
                        }
                    }
                }
                throw Discard()
            }
        } catch is Discard {}
        print("compared \(compared.leaves) leaf, \(compared.branches) branch and \(compared.other) other entries")
        #expect(compared.leaves > 50 && compared.branches > 5 && compared.other > 0)
        try store.close()
    }

    /// The same seeded history, with the planner and without: every root retained reads the same
    /// in both, both verify, and packing took the planner's entries for most roots.
    @Test(arguments: [RetentionPolicy.limitless, .lastRoots(12)])
    func aHistoryReadsTheSameWithAndWithoutThePlanner(retention: RetentionPolicy) throws {
        let seed = SeededGenerator.seed()
        print("PackPlannerTests (\(retention)) seed: \(seed)")
        let directory = try TemporaryDirectory()
        let planned = try runHistory(
            at: directory.file("planned.chrono"), seed: seed, retention: retention, plansPacking: true, waitsEveryOther: true)
        let unplanned = try runHistory(
            at: directory.file("unplanned.chrono"), seed: seed, retention: retention, plansPacking: false, waitsEveryOther: false)
        let counts = planned.packPlanner.counts
        #expect(unplanned.packPlanner.counts.submitted == 0)
        #expect(counts.used > 0 && counts.used * 2 > counts.submitted, "seed \(seed): planner \(counts)")
        let history = try planned.history(allBranches: true)
        #expect(history.map(\.id) == (try unplanned.history(allBranches: true)).map(\.id), "seed \(seed): histories differ")
        for item in history {
            let left = try planned.beginRead(at: .root(item.id))
            let right = try unplanned.beginRead(at: .root(item.id))
            defer { left.close(); right.close() }
            #expect(try contents(of: left) == contents(of: right), "seed \(seed): root \(item.id)")
        }
        for store in [planned, unplanned] {
            let report = try store.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report)")
            try store.close()
        }
    }

    /// A plan whose root's lists changed before packing reached it is not used: packing encodes
    /// that root itself. Here the plans are made, then dropped unread by undoing past their
    /// roots and committing a new branch, and the history still reads and verifies.
    @Test func plansOfRootsThatLeftHistoryAreDroppedWithinTheLimit() throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions(durability: .durable, retention: .lastRoots(40))
        options.packing = eagerPacking
        options.dropsUndoneBranches = true
        let store = try Store.create(at: directory.file("store.chrono"), options: options)
        var generator = SeededGenerator(seed: 5)
        for round in 0..<(PackPlanner.planLimit * 3) {
            try store.write { transaction in
                for _ in 0..<4 { try transaction.put(bytes("key\(Int.random(in: 0..<300, using: &generator))"), generator.bytes(120), in: "items") }
            }
            store.packPlanner.waitUntilIdle()
            if round % 5 == 4 { _ = try store.undo(steps: 2) }
        }
        #expect(store.packPlanner.planCount <= PackPlanner.planLimit)
        #expect(store.packPlanner.counts.used > 0)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        try store.close()
    }
}
