// Packing commits: a durable store packs history in commits of its own, built while the commit
// that made packing due waits for its sync, and synced with the next commit or alone.
import Foundation
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Packing commits")
struct PackingCommitTests {
    /// Commits `count` transactions of ten updates each to a fresh durable store; after each one,
    /// notes whether the next writer's base is a packing commit (a state above the head root),
    /// and what every root holds.
    private func commitTenUpdates(
        count: Int, packing: HistoryPacking, at path: String
    ) throws -> (store: Store, contents: [TransactionID: [String: String]], packingCommits: Int) {
        var options = StoreOptions(durability: .durable, retention: .lastRoots(40))
        options.packing = packing
        let store = try Store.create(at: path, options: options)
        var generator = SeededGenerator(seed: 23)
        var current: [String: String] = [:]
        var contents: [TransactionID: [String: String]] = [:]
        var packingCommits = 0
        try store.write { transaction in
            for index in 0..<600 {
                let value = "v\(generator.next() % 1_000_000)-" + String(repeating: "x", count: 80)
                current["key\(index)"] = value
                try transaction.put(bytes("key\(index)"), bytes(value), in: "items")
            }
        }
        contents[try store.snapshot.head.transaction] = current
        for _ in 0..<count {
            let (_, root) = try store.write { transaction in
                for _ in 0..<10 {
                    let key = "key\(generator.next() % 600)"
                    let value = "v\(generator.next() % 1_000_000)-" + String(repeating: "y", count: 80)
                    current[key] = value
                    try transaction.put(bytes(key), bytes(value), in: "items")
                }
            }
            let id = try #require(root)
            contents[id] = current
            // The next writer waits for a packing commit the last commit handed the writer to.
            let next = try store.beginWrite()
            if next.base.transaction != next.base.head.transaction { packingCommits += 1 }
            #expect(next.base.head.transaction == id, "the next writer builds on the last root")
            next.abort()
        }
        return (store, contents, packingCommits)
    }

    private func checkEveryRoot(_ store: Store, _ contents: [TransactionID: [String: String]]) throws -> String? {
        for item in try store.history(allBranches: true) {
            guard let expected = contents[item.id] else { return "root \(item.id.rawValue) was never committed" }
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            var found: [String: String] = [:]
            try reader.scan("items", range: .all, reverse: false) { key, value in
                found[text(key) ?? ""] = text(value) ?? ""
                return true
            }
            if found != expected { return "root \(item.id.rawValue) reads differently" }
        }
        return nil
    }

    @Test func durableCommitsPackInPackingCommitsAndEveryRootReadsAsCommitted() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let (store, contents, packingCommits) = try commitTenUpdates(count: 60, packing: .standard, at: path)
        // A batch of two roots (or a few more, when roots pack small) becomes due every second
        // or third commit once the window is full.
        #expect(packingCommits >= 10, "\(packingCommits) packing commits")
        try store.synchronize()
        let state = try store.snapshot.state
        #expect(state.packs.packedPages > 100, "\(state.packs.packedPages) pages packed")
        // Packing commits make no roots: the last 40 are retained, each one a root the workload
        // committed.
        let listed = try store.history(allBranches: true)
        #expect(listed.count == 40, "\(listed.count) roots listed")
        #expect(try checkEveryRoot(store, contents) == nil)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        try store.close()
        let reopened = try Store.open(at: path, options: store.options)
        defer { try? reopened.close() }
        #expect(try checkEveryRoot(reopened, contents) == nil)
        #expect(try reopened.snapshot.state.packs.packedPages == state.packs.packedPages)
    }

    @Test func packingInsideCommitsMakesNoPackingCommitAndPacksAsMuch() throws {
        let directory = try TemporaryDirectory()
        var inline = HistoryPacking.standard
        inline.inBackground = false
        let (store, contents, packingCommits) = try commitTenUpdates(count: 60, packing: inline, at: directory.file("inline.chrono"))
        defer { try? store.close() }
        #expect(packingCommits == 0)
        #expect(try store.snapshot.state.packs.packedPages > 100)
        #expect(try checkEveryRoot(store, contents) == nil)
    }

    /// A packing commit that no later commit joins is synced by its own thread after the join
    /// delay: the process then gives up the data file's writer lock, so another handle (here in
    /// the same process; another process alike) can write without waiting.
    @Test func aPackingCommitNoCommitJoinsIsSyncedAloneAndReleasesTheWriterLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        var options = StoreOptions(durability: .durable, retention: .limitless)
        options.packing = HistoryPacking(window: 2, batchRoots: 1)
        let store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        for round in 0..<3 {
            try store.write { try $0.put(bytes("key"), bytes("value \(round)"), in: "items") }
        }
        // The third commit left a batch due: its packing commit is registered or being built.
        let deadline = Date().addingTimeInterval(5)
        func packingCommitPending() throws -> Bool {
            let published = try store.snapshot
            return store.groupCommit.registeredCount > 0 || published.transaction == published.head.transaction
        }
        while try packingCommitPending() {
            #expect(Date() < deadline, "the packing commit was not synced within 5 s")
            if Date() >= deadline { return }
            Thread.sleep(forTimeInterval: 0.002)
        }
        #expect(try store.snapshot.state.packs.packedPages > 0)
        let other = try Store.open(at: path, options: options)
        defer { try? other.close() }
        let writer = try other.beginWriteWithoutWaiting()
        #expect(writer != nil, "the packing commit's process still holds the writer lock")
        writer?.abort()
        #expect(store.packingCommitFailure == nil)
    }

    /// A packing commit that fails (here: an old version it packs is damaged on disk) changes
    /// nothing: every commit around it succeeds and reads as committed, the store says why
    /// (`packingCommitFailure`, naming the page) while later packing commits fail the same way,
    /// and once retention drops the damaged version, packing succeeds again and clears it.
    @Test func aPackingCommitThatFailsLeavesEveryCommitAndSaysWhy() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let options = StoreOptions(durability: .durable, retention: .lastRoots(30))
        var store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        var current: [String: String] = [:]
        try store.write { transaction in
            for index in 0..<400 {
                current["key\(index)"] = "first \(index)"
                try transaction.put(bytes("key\(index)"), bytes("first \(index)"), in: "items")
            }
        }
        try store.write { try $0.put(bytes("key200"), bytes("changed"), in: "items") }
        current["key200"] = "changed"
        // The leaf that commit replaced: kept whole for the older root until packing takes it.
        let reader = try store.beginRead()
        let dead = try LoadedRoot(reader.snapshot.state.head, reader: reader.treeReader).invalidatedPages(reader: reader.treeReader)
        let leaf = try #require(try dead.first { try reader.treeReader.read($0, kind: nil, cached: false).kindByte == PageKind.leaf.rawValue })
        reader.close()
        // Damaged on disk, and reopened: this process's cache and map no longer hold the page.
        try store.close()
        try RawFile.flipByte(in: path, at: leaf.page.rawValue * UInt64(store.pageSize) + UInt64(store.pageSize / 2))
        store = try Store.open(at: path, options: options)

        var failure: StoreError?
        for round in 0..<80 {
            try store.write { try $0.put(bytes("key\(round % 50)"), bytes("round \(round)"), in: "items") }
            current["key\(round % 50)"] = "round \(round)"
            // The next writer waits for a packing commit the last commit handed the gate to; a
            // failed one records why just after giving the gate up, so the failure may show a
            // round later (it repeats every round until retention drops the damaged version).
            try store.beginWrite().abort()
            if failure == nil, let error = store.packingCommitFailure {
                failure = try #require(error as? StoreError)
                #expect(failure?.damagedPage == leaf.page, "\(String(describing: failure))")
                let report = try store.verify()
                #expect(!report.isSound, "verify finds the damaged version")
            }
            let head = try store.read { reader in
                try (0..<400).map { text(try reader.value(forKey: bytes("key\($0)"), in: "items")) }
            }
            #expect(head == (0..<400).map { current["key\($0)"] }, "round \(round): the head reads as committed")
        }
        #expect(failure != nil, "packing reached the damaged version and failed")
        // Retention dropped the damaged version long ago: packing ran again and succeeded.
        #expect(store.packingCommitFailure == nil)
        #expect(try store.verify().isSound)
    }
}

