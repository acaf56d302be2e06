// Reading packed history while commits reuse the slots packing freed: never from a slot in flux.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// Problems found by the checking thread. `@unchecked Sendable`: guarded by `lock`.
private final class FoundProblems: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    func add(_ problem: String) { lock.withLock { list.append(problem) } }
    var problems: [String] { lock.withLock { list } }
    func stop() { lock.withLock { stopped = true } }
    var isStopped: Bool { lock.withLock { stopped } }
    /// The checking thread is done.
    func finish() { finished.signal() }
    func waitUntilFinished() { finished.wait() }
}

@Suite("Packed slots reused under readers")
struct PackedSlotReuseTests {
    /// Regression (found by `BTreeModelTests` under a loaded machine): `verify()` walked every
    /// retained root with the head's reader, which reads a page's slot first and the pack only
    /// when the slot holds another version. A packed version's slot is free, and a commit may
    /// reuse it while that read runs: the reader checked the slot's header (still the packed
    /// version's) and then parsed bytes the commit's leader was overwriting through the memory
    /// map ("page 10629873316386220834 is damaged", "packed page 267 (born in 6) is reached by no
    /// retained root"). Here one thread commits ten-update transactions (packing commits run in
    /// the background and reuse freed slots) while another verifies the store over and over.
    @Test(arguments: [4096, 16384])
    func verifyingWhileCommitsReusePackedSlotsFindsNoDamage(pageSize: Int) throws {
        try runWhileCommitting(pageSize: pageSize, name: "verify") { store, _, _ in
            try store.verify().problems
        }
    }

    /// The same race for the other readers of old roots: the history listing (each listed root's
    /// page, mostly packed), as-of reads of old roots (through `beginRead(at:)`, which loads the
    /// old root's page) and their records, each of which is 120 equal bytes.
    @Test(arguments: [4096, 16384])
    func listingAndReadingOldRootsWhileCommitsReusePackedSlotsFindsNoDamage(pageSize: Int) throws {
        try runWhileCommitting(pageSize: pageSize, name: "history") { store, recordCount, loaded in
            var problems: [String] = []
            // The oldest retained roots that hold every record (newest first in the listing).
            let items = try store.history().filter { $0.id >= loaded }
            for item in items.suffix(6) {
                // Pruned since the listing: the commits go on meanwhile.
                guard let reader = try? store.beginRead(at: .root(item.id)) else { continue }
                defer { reader.close() }
                var count = 0
                try reader.scan("c") { _, value in
                    if value.count != 120 || Set(value).count != 1 { problems.append("root \(item.id): a value of \(value.count) bytes, not 120 equal ones") }
                    count += 1
                    return true
                }
                if count != recordCount { problems.append("root \(item.id): \(count) records, not \(recordCount)") }
            }
            return problems
        }
    }

    /// A head reader after a revert to the loading root, long since packed, while another process
    /// commits: the head reaches packed versions, and the other process's commits reuse their
    /// free slots without this process's staged pages telling its readers, so only the head
    /// reader's pack-first look at versions born by the pack cursor keeps its scans off those
    /// slots (`HeadReachFlagTests` has the deterministic regression; this is the race itself).
    @Test func readingTheHeadAfterARevertWhileAnotherProcessReusesPackedSlotsFindsNoDamage() throws {
        let seed = SeededGenerator.seed()
        print("PackedSlotReuseTests seed: \(seed) (head after revert, another process)")
        let directory = try TemporaryDirectory(prefix: "chrono-processes")
        let path = directory.file("reuse.chrono")
        let store = try Store.create(at: path, options: StoreOptions(pageSize: 4096, durability: .durable, retention: .lastRoots(40)))
        defer { try? store.close() }
        let recordCount = Self.recordCount
        let loaded = try load(store)
        var generator = SeededGenerator(seed: seed)
        for transaction in 0..<36 { try commitTenUpdates(store, transaction, &generator) }
        try #require(try store.snapshot.state.packs.cursor > loaded, "the loading root is packed")
        try store.revert(to: loaded)
        #expect(try store.snapshot.state.headMayReachPackedVersions == true)
        let helper = try TestHelperProcess.start(["write", path, "other", "300"])
        var problems: [String] = []
        var rounds = 0
        while helper.isRunning && problems.count < 3 {
            do {
                try store.read { reader in
                    var count = 0
                    try reader.scan("c") { _, value in
                        if value != [UInt8](repeating: 1, count: 120) { problems.append("round \(rounds): a value that is not the loaded one") }
                        count += 1
                        return true
                    }
                    if count != recordCount { problems.append("round \(rounds): \(count) records, not \(recordCount)") }
                }
            } catch {
                problems.append("round \(rounds): \(error)")
            }
            rounds += 1
        }
        let (status, _, errors) = helper.finish()
        print("PackedSlotReuseTests: \(rounds) rounds of head after revert, another process")
        try store.read { reader in
            let root = try #require(try reader.collectionEntry(named: "c")).root
            // The race happened: pages the head reaches are packed, and their slots now hold
            // the other process's pages.
            var packed = 0, reused = 0
            try TreePages.forEach(in: root, reader: reader.treeReader) { page, _ in
                guard try reader.treeReader.packs?.entry(page) != nil else { return }
                packed += 1
                do { _ = try store.pageFile.read(page, kind: nil, pageCount: UInt64.max, cached: false) } catch { reused += 1 }
            }
            #expect(packed > 0 && reused > 0, "\(packed) packed pages, \(reused) slots reused")
        }
        #expect(status == 0, "helper failed: \(errors)")
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(3))")
        #expect(try store.read { try $0.count(in: "shared") } == 300)
        #expect(try store.verify().isSound)
    }

    private static let recordCount = 600

    /// Puts ``recordCount`` records of 120 bytes of 1 into collection "c"; returns the root.
    private func load(_ store: Store) throws -> TransactionID {
        try #require(try store.write { writer in
            for index in 0..<Self.recordCount { try writer.put(bytes("key-\(index)"), [UInt8](repeating: 1, count: 120), in: "c") }
        }.1)
    }

    /// One transaction of ten updates of random loaded records, each 120 bytes of `transaction`.
    private func commitTenUpdates(_ store: Store, _ transaction: Int, _ generator: inout SeededGenerator) throws {
        try store.write { writer in
            for _ in 0..<10 {
                let index = Int.random(in: 0..<Self.recordCount, using: &generator)
                try writer.put(bytes("key-\(index)"), [UInt8](repeating: UInt8(truncatingIfNeeded: transaction), count: 120), in: "c")
            }
        }
    }

    /// Loads 600 records, then commits 400 ten-update transactions on one thread while `check`
    /// (given the store, the record count and the loading root) runs over and over on another;
    /// expects no problem from any round.
    private func runWhileCommitting(
        pageSize: Int, name: String, check: @escaping @Sendable (Store, Int, TransactionID) throws -> [String]
    ) throws {
        let seed = SeededGenerator.seed()
        print("PackedSlotReuseTests seed: \(seed) (\(name), page size \(pageSize))")
        let directory = try TemporaryDirectory()
        let path = directory.file("reuse.chrono")
        let store = try Store.create(at: path, options: StoreOptions(pageSize: pageSize, durability: .durable, retention: .lastRoots(40)))
        defer { try? store.close() }
        let recordCount = Self.recordCount
        let loaded = try load(store)
        var generator = SeededGenerator(seed: seed)
        let found = FoundProblems()
        let checker = Thread {
            var rounds = 0
            while !found.isStopped {
                do {
                    for problem in try check(store, recordCount, loaded) { found.add("round \(rounds): \(problem)") }
                } catch {
                    found.add("round \(rounds): \(error)")
                }
                rounds += 1
            }
            print("PackedSlotReuseTests: \(rounds) rounds of \(name)")
            found.finish()
        }
        checker.start()
        for transaction in 0..<400 { try commitTenUpdates(store, transaction, &generator) }
        found.stop()
        found.waitUntilFinished()
        #expect(found.problems.isEmpty, "seed \(seed): \(found.problems.prefix(3))")
        #expect(try store.verify().isSound)
        #expect(try store.read { try $0.count(in: "c") } == recordCount)
    }
}
