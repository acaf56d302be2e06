// Where a typed durable commit's sync runs: on the committing task's thread when it is alone, beside the lane otherwise.
@testable import ChronoStore
@testable import ChronoStoreEngine
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The threads the syncs of a store's in-memory file ran on, and the threads the transactions'
/// bodies ran on. `@unchecked Sendable`: guarded by `lock`.
private final class ThreadLog: @unchecked Sendable {
    private let lock = NSLock()
    private var syncs: [pthread_t] = []
    private var bodies: [pthread_t] = []

    /// A count shared between tasks and the sync hook.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count: Int
        init(_ count: Int) { self.count = count }
        var value: Int { lock.withLock { count } }
        func decrement() { lock.withLock { count -= 1 } }
    }

    func recordSync() { lock.withLock { syncs.append(pthread_self()) } }
    func recordBody() { lock.withLock { bodies.append(pthread_self()) } }
    var syncThreads: [pthread_t] { lock.withLock { syncs } }
    var bodyThreads: [pthread_t] { lock.withLock { bodies } }
}

@Suite struct CommitThreadTests {
    /// A store over an in-memory file whose syncs are logged. With `commitsToCome`, each sync
    /// lasts until two more commits have registered for the next group, as long as transactions
    /// are still to start (`commitsToCome` says how many), as a disk's sync lasts while other
    /// tasks build their commits; so the test does not depend on how busy the machine is (a 5 s
    /// bound only keeps a broken engine from hanging it).
    private func makeStore(_ log: ThreadLog, commitsToCome: ThreadLog.Counter? = nil) throws -> (ChronoStore, FaultInjectingFile) {
        let file = FaultInjectingFile(name: "threads")
        let engine = try Store.create(in: file, options: ChronoStoreOptions(durability: .durable).engineValue)
        file.duringSyncs {
            log.recordSync()
            guard let commitsToCome else { return }
            let deadline = Date().addingTimeInterval(5)
            let waiting = engine.groupCommit.registeredCount
            while engine.groupCommit.registeredCount < waiting + 2, commitsToCome.value > 0, Date() < deadline { usleep(100) }
        }
        return (ChronoStore(engine: engine, url: nil), file)
    }

    @Test func aLoneDurableTransactionSyncsOnItsOwnThreadAndIsDurableWhenItReturns() async throws {
        let log = ThreadLog()
        let (store, file) = try makeStore(log)
        let counters = store.datastore(CounterFormat.self)
        for index in 0..<5 {
            let syncsBefore = file.syncCount
            try await store.transaction {
                try await counters.persist(Counter(id: "c\(index)", value: index))
                log.recordBody()
            }
            #expect(file.syncCount == syncsBefore + 1)
            #expect(file.pendingOperationCount == 0, "durable when the transaction returns")
        }
        // No hop: each sync ran on the thread that ran its transaction's body (a nonisolated
        // task does not move between the body and the commit, which has no suspension point).
        let syncs = log.syncThreads
        let bodies = log.bodyThreads
        #expect(syncs.count == 5 && bodies.count == 5)
        for (sync, body) in zip(syncs, bodies) { #expect(pthread_equal(sync, body) != 0) }
        file.duringSyncs(nil)
        try await store.close()
    }

    @Test func concurrentDurableTransactionsStillShareSyncs() async throws {
        let log = ThreadLog()
        let toCome = ThreadLog.Counter(200)
        let (store, file) = try makeStore(log, commitsToCome: toCome)
        let counters = store.datastore(CounterFormat.self)
        let syncsBefore = file.syncCount
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        try await store.transaction {
                            toCome.decrement()
                            try await counters.persist(Counter(id: "t\(task)-\(index)", value: index))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await counters.count() == 200)
        let syncs = file.syncCount - syncsBefore
        print("200 concurrent durable transactions took \(syncs) syncs")
        // Each sync lasted until two more commits registered, so every group but the first and
        // the last few holds at least two: about 100 syncs at most (one a commit would be 200).
        #expect(syncs <= 120, "commits waiting beside the lane share a leader's sync")
        file.duringSyncs(nil)
        try await store.close()
    }
}
