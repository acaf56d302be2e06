// Creating, writing, reading and reopening a store on a real file.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Store basics")
struct StoreBasicsTests {
    @Test func putGetDeleteAndCountSurviveReopen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("basics.chrono")
        let store = try Store.create(at: path)
        try store.write { transaction in
            for index in 0..<500 { try transaction.put(bytes("key-\(index)"), bytes("value-\(index)"), in: "items") }
        }
        try store.write { transaction in
            for index in stride(from: 0, to: 500, by: 2) { try transaction.delete(bytes("key-\(index)"), in: "items") }
        }
        do {
            let transaction = try store.beginRead()
            defer { transaction.close() }
            #expect(try transaction.count(in: "items") == 250)
            #expect(text(try transaction.value(forKey: bytes("key-1"), in: "items")) == "value-1")
            #expect(try transaction.value(forKey: bytes("key-2"), in: "items") == nil)
        }
        try store.close()
        let reopened = try Store.open(at: path)
        do {
            let transaction = try reopened.beginRead()
            defer { transaction.close() }
            #expect(try transaction.count(in: "items") == 250)
            let all = try entries(transaction, "items")
            #expect(all.count == 250)
            #expect(all.map { $0.0 } == all.map { $0.0 }.sorted { KeyOrder.compare($0, $1) < 0 })
            #expect(text(try transaction.value(forKey: bytes("key-499"), in: "items")) == "value-499")
        }
        try reopened.close()
    }

    @Test func largeValuesRoundTripThroughOverflowPages() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("large.chrono"))
        var generator = SeededGenerator(seed: 7)
        let big = generator.bytes(16 << 20)
        let medium = generator.bytes(5000)
        try store.write { transaction in
            try transaction.put(bytes("big"), big, in: "blobs")
            try transaction.put(bytes("medium"), medium, in: "blobs")
        }
        do {
            let transaction = try store.beginRead()
            defer { transaction.close() }
            #expect(try transaction.value(forKey: bytes("big"), in: "blobs") == big)
            #expect(try transaction.value(forKey: bytes("medium"), in: "blobs") == medium)
        }
        try store.write { try $0.put(bytes("big"), bytes("small now"), in: "blobs") }
        try store.close()
        let reopened = try Store.open(at: directory.file("large.chrono"))
        do {
            let transaction = try reopened.beginRead()
            defer { transaction.close() }
            #expect(text(try transaction.value(forKey: bytes("big"), in: "blobs")) == "small now")
            #expect(try transaction.value(forKey: bytes("medium"), in: "blobs") == medium)
        }
        try reopened.close()
    }

    @Test(arguments: [Durability.durable, .deferred])
    func fileSizeLevelsOffUnderSteadyUpdates(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("steady.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: durability, checkpointInterval: 8, retention: .lastRoots(1)))
        var sizes: [UInt64] = []
        for round in 0..<20 {
            for batch in 0..<10 {
                try store.write { transaction in
                    for index in 0..<50 {
                        try transaction.put(bytes("key-\((batch * 50 + index) % 400)"), bytes("round \(round) value \(index)"), in: "steady")
                    }
                }
            }
            sizes.append(try store.pageFile.file.byteCount())
        }
        try store.close()
        print("file sizes per round: \(sizes)")
        #expect(sizes.last! == sizes[sizes.count / 2], "the file keeps growing: \(sizes)")
    }
}

@Suite("Verify")
struct VerifyTests {
    @Test(arguments: [Durability.durable, .deferred])
    func everyPageIsReachableOrFreeAfterEachCommit(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("verify.chrono"), options: StoreOptions(durability: durability, checkpointInterval: 4, retention: .lastRoots(3)))
        for round in 0..<40 {
            try store.write { transaction in
                for index in 0..<30 { try transaction.put(bytes("k\((round * 7 + index) % 60)"), bytes("r\(round)"), in: "c") }
                if round % 3 == 0 { try transaction.delete(bytes("k\(round % 60)"), in: "c") }
            }
            let report = try store.verify()
            #expect(report.problems == [], "after round \(round)")
            #expect(report.leakedPageCount == 0, "after round \(round): \(report)")
            if !report.problems.isEmpty || report.leakedPageCount != 0 { break }
        }
        try store.close()
    }
}

@Suite("Transaction ids")
struct TransactionIDTests {
    /// Regression: a damaged lock file (or state) whose transaction floor is at the end of the id
    /// space made the next write trap on overflow; it is now a typed error and the store still
    /// reads.
    @Test func idsAtTheEndOfTheRangeAreATypedErrorNotATrap() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("ids.chrono"))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("kept"), bytes("value"), in: "records") }
        let coordination = try #require(store.coordination)
        coordination.raiseTransactionFloor(UInt64.max)
        #expect(throws: StoreError.self) { try store.write { try $0.put(bytes("new"), bytes("value"), in: "records") } }
        #expect(try store.read { try $0.value(forKey: bytes("kept"), in: "records") } == bytes("value"))
    }
}

@Suite("Free space")
struct FreeSpaceTests {
    /// Regression: in deferred mode only every `checkpointInterval`-th commit synced, and pages
    /// that unsynced commits release are reused only after a sync, so 30 transactions that each
    /// rewrite every record grew the file by all 30 transactions' pages (the benchmark's 100
    /// batches of 1,000 puts: 350 MB for 86 MB of data). A commit now also syncs once the commits
    /// since the last sync wrote `checkpointByteLimit` bytes, after which their pages are reused.
    @Test func largeDeferredTransactionsReuseTheirPagesOnceTheyWroteTheCheckpointLimit() throws {
        let directory = try TemporaryDirectory()
        func rewriteEveryRecord(_ name: String, checkpointByteLimit: Int) throws -> Int {
            var options = StoreOptions(durability: .deferred, checkpointInterval: 64, retention: .lastRoots(1))
            options.checkpointByteLimit = checkpointByteLimit
            let path = directory.file(name)
            let store = try Store.create(at: path, options: options)
            let value = { (round: Int) in [UInt8](repeating: UInt8(round), count: 150) }
            for round in 0..<30 {
                try store.write { transaction in
                    for index in 0..<2_000 { try transaction.put(bytes("record-\(index)"), value(round), in: "records") }
                }
            }
            let read = try store.read { reader in
                try stride(from: 0, to: 2_000, by: 97).map { try reader.value(forKey: bytes("record-\($0)"), in: "records") }
            }
            #expect(read.allSatisfy { $0 == value(29) })
            let report = try store.verify()
            #expect(report.problems == [] && report.leakedPageCount == 0, "\(report)")
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            try store.close()
            return size
        }
        let bounded = try rewriteEveryRecord("bounded.chrono", checkpointByteLimit: 1 << 20)
        let unbounded = try rewriteEveryRecord("unbounded.chrono", checkpointByteLimit: .max)
        // Each transaction writes about 130 pages (520 KiB): the bounded store syncs every other
        // commit and keeps reusing pages; the unbounded one holds all 30 transactions' pages.
        #expect(bounded < 3 << 20, "bounded store: \(bounded) bytes")
        #expect(unbounded > 3 * bounded, "unbounded \(unbounded) bytes against bounded \(bounded)")
    }

    /// Regression: settling the free tree consumed a new entry while deleting consumed ones and
    /// never deleted it, so its pages were listed free twice and handed out while in use.
    @Test func freeTreeNeverListsAPageTwiceUnderDeferredCheckpoints() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("deferred.chrono"), options: StoreOptions(durability: .deferred, checkpointInterval: 8, retention: .lastRoots(1)))
        for commit in 0..<120 {
            try store.write { transaction in
                for index in 0..<50 {
                    try transaction.put(bytes("key-\((commit * 50 + index) % 400)"), bytes("commit \(commit)"), in: "steady")
                }
            }
            let report = try store.verify()
            #expect(report.problems == [] && report.leakedPageCount == 0, "after commit \(commit): \(report)")
            if !report.problems.isEmpty || report.leakedPageCount != 0 { break }
        }
        try store.close()
    }
}
