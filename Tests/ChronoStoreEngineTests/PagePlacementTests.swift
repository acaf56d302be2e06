// Where a commit's pages go: the pages the next commits replace again are written side by side,
// since a durable commit's sync costs by the stretch of pages more than by the page.
import Foundation
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Page placement")
struct PagePlacementTests {
    /// The pages written by transaction `birth` (read from the page headers on disk), ascending.
    private static func pagesBorn(in path: String, birth: TransactionID, pageSize: Int) throws -> [UInt64] {
        let contents = try RawFile.bytes(path)
        return (1..<(contents.count / pageSize)).compactMap { page -> UInt64? in
            contents.withUnsafeBytes { raw in
                let header = page * pageSize
                let own = raw.loadUnaligned(fromByteOffset: header + PageHeader.pageIDOffset, as: UInt64.self)
                let born = raw.loadUnaligned(fromByteOffset: header + PageHeader.birthOffset, as: UInt64.self)
                return UInt64(littleEndian: own) == UInt64(page) && UInt64(littleEndian: born) == birth.rawValue
                    ? UInt64(page) : nil
            }
        }
    }

    /// How many stretches of neighbouring pages `pages` (ascending) form.
    private static func stretches(_ pages: [UInt64]) -> Int {
        pages.isEmpty ? 0 : 1 + zip(pages, pages.dropFirst()).filter { $1 != $0 + 1 }.count
    }

    /// Random single puts into a three-level tree: the put's leaf and lower branches are
    /// scattered by nature, but the tree's top, the catalog leaf, the root page and the state
    /// (replaced by every commit) go in one stretch, and the file does not grow for it.
    @Test func randomSinglePutsWriteTheirRecurringPagesInOneStretch() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .durable, retention: .lastRoots(1)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 0x5EED_0017)
        print("PagePlacementTests seed: \(0x5EED_0017)")
        let keys = (0..<40_000).map { _ in generator.bytes(24) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(100), in: "data") }
        }
        for _ in 0..<200 {
            try store.write { try $0.put(keys[Int(generator.next() % UInt64(keys.count))], generator.bytes(100), in: "data") }
        }
        let pageCountBefore = try store.snapshot.state.pageCount
        var counts: [Int] = []
        var together = 0
        for _ in 0..<40 {
            let (_, id) = try store.write {
                try $0.put(keys[Int(generator.next() % UInt64(keys.count))], generator.bytes(100), in: "data")
            }
            let head = try #require(id)
            let pages = try Self.pagesBorn(in: path, birth: head, pageSize: store.pageSize)
            let snapshot = try store.snapshot
            let catalog = snapshot.head.catalog.page.rawValue
            let recurring = [snapshot.stateReference.page.rawValue, snapshot.state.head.page.rawValue, catalog].sorted()
            if recurring.last! - recurring.first! <= 3 { together += 1 }
            #expect(pages.count == 6, "a single put into a three-level tree writes 6 pages: \(pages)")
            counts.append(Self.stretches(pages))
        }
        print("stretches per commit: \(counts); state, root page and catalog leaf together in \(together) of 40")
        // 6 pages: the leaf and the branch above it scattered, one stretch for the tree's top,
        // the catalog leaf, the root page and the state (placed one after another without this:
        // 6 stretches).
        #expect(counts.allSatisfy { $0 <= 4 } && counts.filter { $0 <= 3 }.count >= 30, "\(counts)")
        #expect(together >= 30)
        let growth = try store.snapshot.state.pageCount - pageCountBefore
        #expect(growth <= 8, "the file grew by \(growth) pages for 40 single puts")
        #expect(try store.verify().isSound)
    }

    /// Appends, as an app's event log makes them (a record and a date index entry, both at the
    /// right edge of their trees): every page such a commit writes is replaced by the next one,
    /// so they go in at most two stretches, including when a leaf splits (the full left leaf
    /// moves away, the right one stays in place).
    @Test func appendingCommitsWriteTheirPagesInAtMostTwoStretches() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .durable, retention: .lastRoots(1)))
        defer { try? store.close() }
        func append(_ number: Int) throws -> TransactionID {
            let key = IndexKey.id(UInt64(number))
            let (_, id) = try store.write { transaction in
                try transaction.put(key, bytes("record \(number) of the app's event log, with some text"), in: "records")
                try transaction.put(key + IndexKey.id(UInt64(number) * 1000), [], in: "by date")
            }
            return try #require(id)
        }
        for number in 0..<1_500 { _ = try append(number) }
        var counts: [Int] = []
        for number in 1_500..<1_600 {
            let id = try append(number)
            counts.append(Self.stretches(try Self.pagesBorn(in: path, birth: id, pageSize: store.pageSize)))
        }
        print("stretches per commit: \(counts)")
        // A leaf split adds a page elsewhere (the full left leaf) now and then.
        #expect(counts.filter { $0 <= 2 }.count >= 95, "\(counts)")
        #expect(try store.verify().isSound)
    }

    /// Once compaction loaded every reusable page, each page it takes is the lowest free one,
    /// including copies of pages the previous commit wrote and the commit's own pages, which
    /// otherwise prefer runs or the end of the file: taking the end while free pages were left
    /// made a compaction pass give up (it may not grow the file) and left pages past the tail it
    /// cut (found by review).
    @Test func compactionTakesTheLowestFreePagesWhatEverAPagePrefers() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .durable, retention: .lastRoots(1)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 0x5EED_0031)
        print("PagePlacementTests lowest-first seed: \(0x5EED_0031)")
        let keys = (0..<3_000).map { _ in generator.bytes(24) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(100), in: "data") }
        }
        // Free pages scattered through the file, fewer than the allocator keeps before extending.
        try store.write { transaction in
            for key in keys.prefix(400) { _ = try transaction.delete(key, in: "data") }
        }
        try store.write { try $0.put(keys[2_000], generator.bytes(100), in: "data") }
        let transaction = try store.beginWrite()
        defer { transaction.abort() }
        try transaction.loadEveryReusablePage()
        let free = transaction.allocator.pool.map(\.rawValue).sorted()
        let end = transaction.allocator.nextPage
        #expect(free.count > AllocatorState.singlesKeptBeforeExtending, "the case needs more free pages than that: \(free.count)")
        transaction.allocator.prefersRuns = true
        var taken: [UInt64] = []
        for index in free.indices {
            // Alternately a page that prefers runs and one of the commit's own pages.
            taken.append(try transaction.takeFreePage(preferringRuns: index % 2 == 0).rawValue)
        }
        #expect(taken == free, "every free page, lowest first, before the end of the file")
        #expect(transaction.allocator.nextPage == end)
        #expect(try transaction.takeFreePage(preferringRuns: true).rawValue == end, "then the end of the file")
    }
}
