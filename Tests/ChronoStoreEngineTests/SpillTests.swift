// Large write transactions keep their memory bounded by writing pages out early.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Spilling large transactions")
struct SpillTests {
    fileprivate static func load(_ transaction: WriteTransaction, _ generator: inout SeededGenerator, count: Int) throws -> [[UInt8]: [UInt8]] {
        var model: [[UInt8]: [UInt8]] = [:]
        for index in 0..<count {
            let key = generator.bytes(16)
            let value = index % 500 == 0 ? generator.bytes(9_000) : generator.bytes(Int.random(in: 20...200, using: &generator))
            try transaction.put(key, value, in: "data")
            model[key] = value
            if index % 7 == 0, let victim = model.keys.first {
                try transaction.delete(victim, in: "data")
                model[victim] = nil
            }
        }
        return model
    }

    @Test(arguments: [Durability.durable, .deferred])
    func aTransactionLargerThanItsDirtyLimitCommitsExactlyItsContents(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(
            at: directory.file("spill.chrono"), options: StoreOptions(durability: durability, dirtyPageLimit: 64))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 31)
        let transaction = try store.beginWrite()
        let model = try Self.load(transaction, &generator, count: 20_000)
        #expect(transaction.dirty.count <= 64 + 16, "memory stays near the limit")
        #expect(!transaction.spilled.isEmpty)
        #expect(try entries(transaction, "data").count == model.count)
        try transaction.commit()
        let reader = try store.beginRead()
        defer { reader.close() }
        let stored = try entries(reader, "data")
        #expect(stored.count == model.count)
        #expect(Dictionary(uniqueKeysWithValues: stored) == model)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }

    @Test func anAbortedSpillingTransactionLeavesTheStoreAsItWas() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("abort.chrono"), options: StoreOptions(dirtyPageLimit: 32))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("kept"), bytes("yes"), in: "data") }
        var generator = SeededGenerator(seed: 32)
        let transaction = try store.beginWrite()
        _ = try Self.load(transaction, &generator, count: 5_000)
        transaction.abort()
        #expect(try store.read { try $0.count(in: "data") } == 1)
        try store.write { try $0.put(bytes("after"), bytes("abort"), in: "data") }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }

    @Test func aCrashDuringASpillingTransactionReopensToThePreviousCommit() throws {
        let simulator = CrashSimulator(durability: .durable)
        var options = simulator.options
        options.dirtyPageLimit = 16
        for crashAfter in stride(from: 0, to: 400, by: 37) {
            let file = FaultInjectingFile(name: "spill-crash")
            let store = try Store.create(in: file, options: options)
            try store.write { try $0.put(bytes("kept"), bytes("yes"), in: "data") }
            file.crash(afterOperations: crashAfter)
            var generator = SeededGenerator(seed: UInt64(crashAfter))
            do {
                try store.write { transaction in _ = try Self.load(transaction, &generator, count: 3_000) }
            } catch {
                #expect(file.hasCrashed)
            }
            var imageGenerator = SeededGenerator(seed: UInt64(crashAfter) + 1)
            let reopened = try Store.open(file: FaultInjectingFile(name: "after", image: file.crashImage(using: &imageGenerator)), options: options)
            let count = try reopened.read { try $0.count(in: "data") }
            #expect(count == 1 || !file.hasCrashed)
            let report = try reopened.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        }
    }
}

@Suite("Spilling copies")
struct SpillingCopyTests {
    @Test func aBackupAndARestoreLargerThanTheDirtyLimitCopyEverything() throws {
        let directory = try TemporaryDirectory()
        let options = StoreOptions(dirtyPageLimit: 32)
        let store = try Store.create(at: directory.file("source.chrono"), options: options)
        var generator = SeededGenerator(seed: 41)
        try store.write { transaction in
            for _ in 0..<8_000 { try transaction.put(generator.bytes(20), generator.bytes(Int.random(in: 10...300, using: &generator)), in: "data") }
            try transaction.put(bytes("large"), generator.bytes(70_000), in: "blobs")
        }
        let expected = try contents(of: store)
        try store.backup(to: directory.file("backup.chrono"))
        try store.write { try $0.dropCollection("data") }
        try store.restore(fromBackup: directory.file("backup.chrono"))
        #expect(try contents(of: store) == expected)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        try store.close()
    }

    /// A commit with more dirty pages than `WriteTransaction.backgroundReleaseThreshold` hands its
    /// decoded nodes to a background thread once sealed: what it committed reads back exactly,
    /// and the next transaction edits it while they are freed.
    @Test(arguments: [Durability.durable, .deferred])
    func aLargeCommitsNodesFreedInTheBackgroundLeaveItsContentsAndTheNextTransactionIntact(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("large.chrono"), options: StoreOptions(durability: durability))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 47)
        let transaction = try store.beginWrite()
        var model = try SpillTests.load(transaction, &generator, count: 40_000)
        #expect(transaction.dirty.count >= WriteTransaction.backgroundReleaseThreshold, "\(transaction.dirty.count) dirty pages")
        try transaction.commit()
        #expect(transaction.dirty.isEmpty, "the sealed commit kept its decoded nodes")
        // Its pages are gone from it: reading them through it is a clear error, not damage.
        let someKey = try #require(model.keys.first)
        #expect(throws: StoreError.transactionFinished) { try transaction.value(forKey: someKey, in: "data") }
        // The next transaction rewrites every tenth record while the nodes are freed.
        try store.write { writer in
            for (offset, key) in model.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).enumerated() where offset % 10 == 0 {
                let value = generator.bytes(32)
                try writer.put(key, value, in: "data")
                model[key] = value
            }
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(Dictionary(uniqueKeysWithValues: try entries(reader, "data")) == model)
        #expect(try store.verify().isSound)
    }
}
