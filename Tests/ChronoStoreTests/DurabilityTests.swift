// Deferred durability: commits are visible at once and survive a clean close or synchronize().
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct DurabilityTests {
    @Test func deferredCommitsSurviveSynchronizeAndReopen() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("deferred.chrono"))
        let store = try ChronoStore.create(at: url, options: ChronoStoreOptions(durability: .deferred(checkpointInterval: 1000)))
        let counters = store.datastore(CounterFormat.self)
        for value in 0..<50 { try await counters.persist(Counter(id: "c\(value)", value: value)) }
        try await store.synchronize()
        #expect(try await counters.count() == 50)
        try await store.close()
        let reopened = try await ChronoStore.open(at: url, createIfMissing: false)
        #expect(try await reopened.datastore(CounterFormat.self).count() == 50)
        #expect(try await reopened.history().count == 51)
        #expect(try await reopened.verify().isSound)
    }

    @Test func durableTransactionsFromManyTasksAtOnceAreAllKeptAndObservedOnce() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("group.chrono"))
        let store = try ChronoStore.create(at: url)
        let counters = store.datastore(CounterFormat.self)
        let changes = counters.changes()
        // Group commit: each task's commit returns once durable, while the next task's is built.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<15 { try await counters.persist(Counter(id: "t\(task)-\(index)", value: index)) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await counters.count() == 120)
        // Observers hear each commit's record once, however the commits were grouped.
        var created: [String] = []
        for try await change in changes {
            #expect(change.kind == .created)
            created.append(change.identifier)
            if Set(created).count == 120 { break }
        }
        #expect(created.count == 120)
        try await store.close()
        let reopened = try await ChronoStore.open(at: url, createIfMissing: false)
        #expect(try await reopened.datastore(CounterFormat.self).count() == 120)
        #expect(try await reopened.verify().isSound)
    }

    @Test func aStoreOpenedWithTheWrongPageSizeIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("pages.chrono"))
        try await ChronoStore.create(at: url, options: ChronoStoreOptions(pageSize: 16384)).close()
        #expect(throws: ChronoStoreError.self) { try ChronoStore.open(at: url, options: ChronoStoreOptions(pageSize: 4096)) }
        let store = try await ChronoStore.open(at: url)
        #expect(store.maximumKeyByteCount > 4096 / 4)
    }
}
