// Crash simulation: crash at every file operation of random workloads (commits and history
// operations), tear or drop unsynced writes, reopen, and check that the store holds exactly a
// state it may hold, that every retained root still reads as it did, and that it accepts commits.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// The contents of every collection: collection → key → value.
typealias Contents = [String: [[UInt8]: [UInt8]]]

/// What a workload has seen acknowledged, for judging a crash image.
final class WorkloadRecord {
    /// The contents of every root the workload saw committed.
    var contentsByRoot: [TransactionID: Contents] = [TransactionID(1): [:]]
    /// States the disk may hold after a crash now: from the newest synced one onwards.
    var acceptable: [Contents] = [[:]]
    /// The state the operation under way would produce.
    var inFlight: Contents?

    func attempt(_ contents: Contents) { inFlight = normalized(contents) }

    func acknowledge(head: TransactionID, contents: Contents, synced: Bool) {
        let contents = normalized(contents)
        contentsByRoot[head] = contents
        if synced { acceptable = [] }
        acceptable.append(contents)
        inFlight = nil
    }

    var acceptableAfterCrash: [Contents] { acceptable + (inFlight.map { [$0] } ?? []) }
}

/// A random sequence of commits and history operations, replayable from its seed.
struct RandomWorkload {
    let seed: UInt64
    let stepCount: Int
    /// A backup file on disk that the workload may restore, and what it holds.
    var backup: (path: String, contents: Contents)?

    func run(
        on store: Store, file: FaultInjectingFile, record: WorkloadRecord = WorkloadRecord(),
        afterStep: (Store) throws -> Void = { _ in }
    ) throws {
        var generator = SeededGenerator(seed: seed)
        let durable = store.options.durability == .durable
        for _ in 0..<stepCount {
            let syncsBefore = file.syncCount
            let head = try store.snapshot.head.transaction
            let current = record.contentsByRoot[head] ?? [:]
            let choice = Int.random(in: 0..<100, using: &generator)
            var expected = current
            if choice < 62 {
                try commit(on: store, current: current, expected: &expected, record: record, generator: &generator)
            } else if choice < 74 {
                let items = try store.history()
                guard items.count > 1, let parent = items.first?.parent, let contents = record.contentsByRoot[parent] else { continue }
                record.attempt(contents)
                expected = contents
                try store.undo()
            } else if choice < 82 {
                let items = try store.history()
                guard let target = items.first?.redoTarget, let contents = record.contentsByRoot[target] else { continue }
                record.attempt(contents)
                expected = contents
                try store.redo()
            } else if choice < 89 {
                let items = try store.history(allBranches: true)
                let target = items[Int.random(in: 0..<items.count, using: &generator)].id
                guard let contents = record.contentsByRoot[target] else { continue }
                record.attempt(contents)
                expected = contents
                try store.revert(to: target, label: "revert")
            } else if choice < 93 {
                record.attempt(current)
                try store.prune()
            } else if choice < 95 {
                record.attempt(current)
                try store.clearHistory()
            } else if choice < 96 {
                let existing = try store.snapshots()
                record.attempt(current)
                if existing.count < 2 || Bool.random(using: &generator) {
                    try store.createSnapshot(named: "s\(generator.next() % 1000)")
                } else {
                    try store.deleteSnapshot(named: existing[0].name)
                }
            } else if choice < 97 {
                guard let snapshot = try store.snapshots().first, let contents = record.contentsByRoot[snapshot.root] else { continue }
                record.attempt(contents)
                expected = contents
                try store.checkoutSnapshot(named: snapshot.name)
            } else if choice < 98 {
                record.attempt(current)
                try store.compact()
                // Every root a compaction commits holds the head's contents. When the head is a
                // fork point (an undo came before), the first pass's root can stay beside the
                // second's (RootChain.md, "Known problems"), so it is retained without having
                // been the head after a step (found by a soak run: workload 9013493687713522559).
                for item in try store.history(allBranches: true) where item.id > head && record.contentsByRoot[item.id] == nil {
                    record.contentsByRoot[item.id] = normalized(current)
                }
            } else if choice < 99 {
                guard let backup else { continue }
                record.attempt(backup.contents)
                expected = backup.contents
                try store.restore(fromBackup: backup.path)
            } else {
                record.attempt(current)
                try store.synchronize()
            }
            let newHead = try store.snapshot.head.transaction
            record.acknowledge(
                head: newHead, contents: expected, synced: durable || file.syncCount > syncsBefore)
            try afterStep(store)
        }
    }

    private func commit(
        on store: Store, current: Contents, expected: inout Contents, record: WorkloadRecord,
        generator: inout SeededGenerator
    ) throws {
        let transaction = try store.beginWrite()
        do {
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                let collection = ["alpha", "beta", "gamma"][Int.random(in: 0..<3, using: &generator)]
                let key = bytes("k\(Int.random(in: 0..<300, using: &generator))")
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    try transaction.delete(key, in: collection)
                    expected[collection]?[key] = nil
                } else {
                    let size = Int.random(in: 0..<20, using: &generator) == 0
                        ? Int.random(in: 2000..<30000, using: &generator) : Int.random(in: 1..<200, using: &generator)
                    let value = generator.bytes(size)
                    try transaction.put(key, value, in: collection)
                    expected[collection, default: [:]][key] = value
                }
            }
        } catch {
            transaction.abort()
            throw error
        }
        record.attempt(expected)
        try transaction.commit()
    }
}

func contents(of reader: ReadTransaction) throws -> Contents {
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

func contents(of store: Store) throws -> Contents {
    let reader = try store.beginRead()
    defer { reader.close() }
    return try contents(of: reader)
}

func normalized(_ contents: Contents) -> Contents { contents.filter { !$0.value.isEmpty } }

@Suite("Crash recovery")
struct CrashRecoveryTests {
    @Test(arguments: [Durability.durable, .deferred])
    func reopeningAfterACrashAtAnyOperationYieldsAnAcceptableState(durability: Durability) throws {
        let seed = SeededGenerator.seed()
        print("CrashRecoveryTests (\(durability)) seed: \(seed)")
        var seeds = SeededGenerator(seed: seed)
        let targetPoints = Environment.soakEnabled ? 20_000 : 1_300
        let directory = try TemporaryDirectory()
        let backup = try Self.makeBackup(in: directory)
        var crashPoints = 0
        var finishedFirst = 0
        while crashPoints < targetPoints {
            // In deferred mode, checkpoints every third commit, or (with a long interval) when the
            // unsynced commits wrote 8 or 24 pages, so they land at irregular commits.
            let checkpoints = [(3, 32 << 20), (16, 8 * 4096), (16, 24 * 4096)][Int.random(in: 0..<3, using: &seeds)]
            let simulator = CrashSimulator(
                durability: durability, retention: [.lastRoots(3), .lastRoots(8), .limitless][Int.random(in: 0..<3, using: &seeds)],
                checkpoints: checkpoints)
            let workload = RandomWorkload(seed: seeds.next(), stepCount: Int.random(in: 3...10, using: &seeds), backup: backup)
            let operations = try simulator.operationCount { store, file in try workload.run(on: store, file: file) }
            for crashAfter in 0..<operations {
                crashPoints += 1
                let record = WorkloadRecord()
                let run = try simulator.run(crashAfter: crashAfter) { store, file in
                    try workload.run(on: store, file: file, record: record)
                }
                // A durable store's packing commit syncs alone or with the next commit, as timing
                // has it, so a run may make fewer file operations than the counted one.
                guard run.crashed else {
                    finishedFirst += 1
                    continue
                }
                var imageGenerator = SeededGenerator(seed: seeds.next())
                let image = run.file.crashImage(using: &imageGenerator)
                if let failure = try checkRecovery(image: image, record: record, simulator: simulator) {
                    Issue.record("seed \(seed), workload \(workload.seed), crash after \(crashAfter) of \(operations): \(failure)")
                    return
                }
            }
        }
        print("CrashRecoveryTests (\(durability)): \(crashPoints) crash points checked, \(finishedFirst) runs finished first")
        #expect(crashPoints >= targetPoints)
        #expect(finishedFirst * 10 <= crashPoints, "\(finishedFirst) of \(crashPoints) runs finished before their crash point")
    }

    /// The same with packing after every commit (window 2, short chains), so crashes land in
    /// commits that write pack pages, rebase entries and free pack pages; every third workload
    /// runs with secure delete under last 6 roots, whose commits also rewrite the live entries of pack pages that
    /// lost some and zero freed pages.
    @Test(arguments: [Durability.durable, .deferred])
    func reopeningAfterACrashWhilePackingHistoryYieldsAnAcceptableState(durability: Durability) throws {
        let seed = SeededGenerator.seed()
        print("CrashRecoveryTests packing (\(durability)) seed: \(seed)")
        var seeds = SeededGenerator(seed: seed)
        let targetPoints = Environment.soakEnabled ? 10_000 : 500
        var crashPoints = 0
        var packedRuns = 0
        var securePackedRuns = 0
        var workloads = 0
        // Until a secure-delete workload packed too (a workload may commit too little to pack).
        while crashPoints < targetPoints || (securePackedRuns == 0 && workloads < 100) {
            workloads += 1
            // Secure delete under last 6 roots, where pruning frees pack entries.
            let secureDelete = workloads % 3 == 1
            let simulator = CrashSimulator(
                durability: durability,
                retention: secureDelete ? .lastRoots(6) : [.lastRoots(6), .limitless][Int.random(in: 0..<2, using: &seeds)],
                packing: eagerPacking, secureDelete: secureDelete)
            let workload = RandomWorkload(seed: seeds.next(), stepCount: Int.random(in: 8...14, using: &seeds))
            var packed = false
            let operations = try simulator.operationCount { store, file in
                try workload.run(on: store, file: file)
                packed = try store.snapshot.state.packs.packedPages > 0
            }
            if packed { packedRuns += 1 }
            if packed, simulator.secureDelete { securePackedRuns += 1 }
            for crashAfter in stride(from: operations - 1, through: 0, by: -Int.random(in: 1...3, using: &seeds)) {
                crashPoints += 1
                let record = WorkloadRecord()
                let run = try simulator.run(crashAfter: crashAfter) { store, file in
                    try workload.run(on: store, file: file, record: record)
                }
                var imageGenerator = SeededGenerator(seed: seeds.next())
                let image = run.file.crashImage(using: &imageGenerator)
                if let failure = try checkRecovery(image: image, record: record, simulator: simulator) {
                    Issue.record("seed \(seed), workload \(workload.seed), crash after \(crashAfter) of \(operations): \(failure)")
                    return
                }
            }
        }
        print(
            "CrashRecoveryTests packing (\(durability)): \(crashPoints) crash points, \(packedRuns) workloads packed, \(securePackedRuns) of them with secure delete")
        #expect(packedRuns > 0 && securePackedRuns > 0)
    }

    /// A small backup for workloads to restore.
    static func makeBackup(in directory: TemporaryDirectory) throws -> (path: String, contents: Contents) {
        let store = try Store.create(at: directory.file("source.chrono"))
        try store.write { transaction in
            for index in 0..<50 { try transaction.put(bytes("k\(index)"), bytes("backed up \(index)"), in: "beta") }
            try transaction.put(bytes("large"), [UInt8](repeating: 7, count: 9000), in: "gamma")
        }
        let contents = try contents(of: store)
        try store.backup(to: directory.file("backup.chrono"))
        try store.close()
        return (directory.file("backup.chrono"), contents)
    }

    /// Reopens a crash image and checks contents, every retained root, integrity, and that the
    /// store accepts and keeps a new commit.
    private func checkRecovery(image: [UInt8], record: WorkloadRecord, simulator: CrashSimulator) throws -> String? {
        let file = FaultInjectingFile(name: "recovered", image: image)
        let store: Store
        do {
            store = try Store.open(file: file, options: simulator.options)
        } catch {
            return "reopen failed: \(error)"
        }
        let recovered = try contents(of: store)
        guard record.acceptableAfterCrash.contains(recovered) else {
            return "recovered contents match none of the \(record.acceptableAfterCrash.count) acceptable states"
        }
        for item in try store.history(allBranches: true) {
            guard let expected = record.contentsByRoot[item.id] else { continue }  // the in-flight root
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            guard try contents(of: reader) == expected else { return "retained root \(item.id.rawValue) reads differently" }
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
