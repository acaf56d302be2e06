// The history listing a page at a time: pages put together equal the whole listing.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("History listing pages")
struct HistoryListingTests {
    /// Lists by pages of `size`, each starting after the last root of the one before.
    static func paged(_ store: Store, allBranches: Bool, size: Int) throws -> [HistoryItem] {
        var items: [HistoryItem] = []
        while true {
            let page = try store.history(allBranches: allBranches, limit: size, before: items.last?.id)
            #expect(page.count <= size)
            items += page
            if page.count < size { return items }
        }
    }

    @Test func pagesPutTogetherEqualTheWholeListingAfterRandomHistory() throws {
        let seed = SeededGenerator.seed()
        print("HistoryListingTests seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        for run in 0..<4 {
            let directory = try TemporaryDirectory()
            let retention = [RetentionPolicy.limitless, .days(30), .lastRoots(6), .limitless][run]
            let store = try Store.create(at: directory.file("pages.chrono"), options: StoreOptions(retention: retention))
            defer { try? store.close() }
            var model = RetentionModel()
            for _ in 0..<60 { _ = try model.step(store, random: &random) }
            model.closeReaders()
            for allBranches in [false, true] {
                let whole = try store.history(allBranches: allBranches)
                for size in [1, 3, 7, 1000] {
                    #expect(try Self.paged(store, allBranches: allBranches, size: size) == whole, "seed \(seed) run \(run) size \(size)")
                }
                #expect(try store.history(allBranches: allBranches, limit: 5) == Array(whole.prefix(5)))
            }
            // Branch tips: off the head's line, and no retained root was committed on them.
            let all = try store.history(allBranches: true)
            let line = Set(try store.history().map(\.id))
            let parents = Set(all.compactMap(\.parent))
            for item in all {
                #expect(item.isBranchTip == (!line.contains(item.id) && !parents.contains(item.id)), "seed \(seed) run \(run) root \(item.id.rawValue)")
            }
        }
    }

    @Test func aPageOfTheNewestRootsReadsOnlyThoseRoots() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("many.chrono"), options: StoreOptions(durability: .deferred, retention: .limitless))
        defer { try? store.close() }
        for index in 0..<3000 { try store.write(label: "edit \(index)") { try $0.put(bytes("k"), bytes("\(index)"), in: "c") } }
        let newest = try store.history(limit: 10)
        #expect(newest.map(\.label) == (2990..<3000).reversed().map { "edit \($0)" })
        #expect(newest.first?.isHead == true)
        let next = try store.history(limit: 10, before: newest.last?.id)
        #expect(next.map(\.label) == (2980..<2990).reversed().map { "edit \($0)" })
        let branches = try store.history(allBranches: true, limit: 3, before: newest.first?.id)
        #expect(branches.map(\.id) == Array(newest[1...3].map(\.id)))
    }

    @Test func continuingAfterARootNoLongerRetainedIsAnError() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("gone.chrono"), options: StoreOptions(retention: .lastRoots(2)))
        defer { try? store.close() }
        let first = try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }.1!
        for index in 0..<4 { try store.write { try $0.put(bytes("k"), bytes("\(index)"), in: "c") } }
        #expect(throws: StoreError.rootNotRetained(first)) { try store.history(limit: 5, before: first) }
        #expect(try store.history(allBranches: true, limit: 5, before: first).isEmpty)
    }
}
