// Crash simulation: crash at every file operation of random workloads, tear or drop unsynced
// writes, reopen, and check that the store holds exactly a state it may hold.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// The contents of every collection: collection → key → value.
typealias Contents = [String: [[UInt8]: [UInt8]]]

/// A random sequence of transactions, replayable from its seed.
struct RandomWorkload {
    let seed: UInt64
    let transactionCount: Int

    /// Runs the workload; after each commit returns, `committed` is called with the contents
    /// and whether the commit synced. `attempting` is called before each commit.
    func run(
        on store: Store, file: FaultInjectingFile,
        attempting: (Contents) -> Void = { _ in }, committed: (Contents, Bool) -> Void = { _, _ in }
    ) throws {
        var generator = SeededGenerator(seed: seed)
        var model: Contents = [:]
        for _ in 0..<transactionCount {
            var next = model
            let syncsBefore = file.syncCount
            let transaction = try store.beginWrite()
            do {
                let operations = Int.random(in: 1...40, using: &generator)
                for _ in 0..<operations {
                    let collection = ["alpha", "beta", "gamma"][Int.random(in: 0..<3, using: &generator)]
                    let key = bytes("k\(Int.random(in: 0..<300, using: &generator))")
                    if Int.random(in: 0..<4, using: &generator) == 0 {
                        try transaction.delete(key, in: collection)
                        next[collection]?[key] = nil
                    } else {
                        let size = Int.random(in: 0..<20, using: &generator) == 0
                            ? Int.random(in: 2000..<30000, using: &generator) : Int.random(in: 1..<200, using: &generator)
                        let value = generator.bytes(size)
                        try transaction.put(key, value, in: collection)
                        next[collection, default: [:]][key] = value
                    }
                }
            } catch {
                transaction.abort()
                throw error
            }
            attempting(next)
            try transaction.commit()
            model = next
            committed(model, file.syncCount > syncsBefore)
            if Int.random(in: 0..<6, using: &generator) == 0 {
                // An explicit sync (two syncs: data, then the verified mark).
                try store.synchronize()
                committed(model, true)
            }
        }
    }
}

func contents(of store: Store) throws -> Contents {
    let reader = try store.beginRead()
    defer { reader.close() }
    var result: Contents = [:]
    for name in try reader.collectionNames() {
        var collection: [[UInt8]: [UInt8]] = [:]
        try reader.scan(name, range: .all, reverse: false) { key, value in
            collection[key] = value
            return true
        }
        if !collection.isEmpty { result[name] = collection }
    }
    return result
}

func normalized(_ contents: Contents) -> Contents { contents.filter { !$0.value.isEmpty } }

@Suite("Crash recovery")
struct CrashRecoveryTests {
    @Test(arguments: [Durability.durable, .deferred])
    func reopeningAfterACrashAtAnyOperationYieldsAnAcceptableCommit(durability: Durability) throws {
        let seed = SeededGenerator.seed()
        print("CrashRecoveryTests (\(durability)) seed: \(seed)")
        var seeds = SeededGenerator(seed: seed)
        let simulator = CrashSimulator(durability: durability)
        let targetPoints = Environment.soakEnabled ? 20_000 : 1_100
        var crashPoints = 0
        var recoveredNewest = 0
        while crashPoints < targetPoints {
            let workload = RandomWorkload(seed: seeds.next(), transactionCount: Int.random(in: 3...8, using: &seeds))
            let operations = try simulator.operationCount { store, file in try workload.run(on: store, file: file) }
            for crashAfter in 0..<operations {
                crashPoints += 1
                // States the disk may hold after the crash: from the newest synced one onwards.
                var acceptable: [Contents] = [[:]]
                var inFlight: Contents?
                let run = try simulator.run(crashAfter: crashAfter) { store, file in
                    try workload.run(on: store, file: file, attempting: { inFlight = normalized($0) }) { model, synced in
                        if synced || durability == .durable { acceptable = [] }
                        acceptable.append(normalized(model))
                        inFlight = nil
                    }
                }
                if let inFlight { acceptable.append(inFlight) }
                #expect(run.crashed)
                var imageGenerator = SeededGenerator(seed: seeds.next())
                let image = run.file.crashImage(using: &imageGenerator)
                let failure = try checkRecovery(image: image, acceptable: acceptable, simulator: simulator)
                if let failure {
                    Issue.record("seed \(seed), workload \(workload.seed), crash after \(crashAfter) of \(operations): \(failure)")
                    return
                }
                if crashAfter == operations - 1 { recoveredNewest += 1 }
            }
        }
        print("CrashRecoveryTests (\(durability)): \(crashPoints) crash points checked")
        #expect(crashPoints >= targetPoints)
    }

    /// Reopens a crash image and checks contents, integrity, and that it accepts a new commit.
    private func checkRecovery(image: [UInt8], acceptable: [Contents], simulator: CrashSimulator) throws -> String? {
        let file = FaultInjectingFile(name: "recovered", image: image)
        let store: Store
        do {
            store = try Store.open(file: file, options: simulator.options)
        } catch {
            return "reopen failed: \(error)"
        }
        let recovered = try contents(of: store)
        guard acceptable.contains(recovered) else {
            return "recovered contents match none of the \(acceptable.count) acceptable states"
        }
        let report = try store.verify()
        guard report.isSound, report.leakedPageCount == 0 else { return "verify after recovery: \(report)" }
        try store.write { try $0.put(bytes("after-crash"), bytes("ok"), in: "alpha") }
        let after = try store.verify()
        guard after.isSound, after.leakedPageCount == 0 else { return "verify after a new commit: \(after)" }
        try store.close()
        let reopened = try Store.open(file: file, options: simulator.options)
        guard text(try reopened.read { try $0.value(forKey: bytes("after-crash"), in: "alpha") }) == "ok" else {
            return "the commit after recovery was lost"
        }
        return nil
    }
}
