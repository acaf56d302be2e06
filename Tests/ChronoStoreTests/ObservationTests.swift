// Observation: committed changes per datastore and per id, including history operations, restores
// and other store instances' commits.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct ObservationTests {
    @Test func changesReportCreatedUpdatedAndDeletedAfterCommit() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let stream = counters.changes()
        try await counters.persist(Counter(id: "a", value: 1))
        try await counters.persist(Counter(id: "a", value: 2))
        try await counters.delete("a")
        let changes = try await collect(3, from: stream)
        #expect(changes.map(\.kind) == [.created, .updated, .deleted])
        #expect(changes[1].oldValue == Counter(id: "a", value: 1))
        #expect(changes[1].newValue == Counter(id: "a", value: 2))
        #expect(changes[2].identifier == "a")
    }

    @Test func aTransactionDeliversItsNetChangesOnlyWhenItCommits() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let people = store.datastore(PersonFormat.self)
        let stream = counters.changes()
        try? await store.transaction {
            try await counters.persist(Counter(id: "rolled-back", value: 1))
            throw Oops()
        }
        try await store.transaction {
            try await counters.persist(Counter(id: "a", value: 1))
            try await counters.persist(Counter(id: "a", value: 2))
            try await counters.persist(Counter(id: "temporary", value: 1))
            try await counters.delete("temporary")
            try await people.persist(person(1))
        }
        try await counters.persist(Counter(id: "marker", value: 0))
        let changes = try await collect(2, from: stream)
        #expect(changes.map(\.identifier) == ["a", "marker"])
        #expect(changes[0].kind == .created && changes[0].newValue?.value == 2)
    }

    @Test func perIdentifierStreamsSeeOnlyTheirRecord() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let stream = counters.changes(for: "b")
        try await counters.persist(Counter(id: "a", value: 1))
        try await counters.persist(Counter(id: "b", value: 1))
        try await counters.persist(Counter(id: "c", value: 1))
        try await counters.persist(Counter(id: "b", value: 2))
        let changes = try await collect(2, from: stream)
        #expect(changes.map { $0.newValue?.value } == [1, 2])
    }

    @Test func undoRedoRevertAndRestoreAreObserved() async throws {
        let (store, directory) = try makeStore()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        let first = try await store.head()
        try await counters.persist(Counter(id: "a", value: 2))
        try await counters.persist(Counter(id: "b", value: 1))
        let backup = URL(fileURLWithPath: directory.file("backup.chrono"))
        try await store.backup(to: backup)
        let stream = counters.changes()
        try await store.undo()  // removes b
        try await store.redo()  // b again
        try await store.revert(to: first)  // a back to 1, b gone
        try await store.restore(fromBackup: backup)  // a = 2, b = 1
        let changes = try await collect(6, from: stream)
        let summary = changes.map { "\($0.kind) \($0.identifier) \($0.newValue?.value ?? -1)" }
        #expect(summary == [
            "deleted b -1", "created b 1", "updated a 1", "deleted b -1", "updated a 2", "created b 1",
        ])
    }

    @Test func commitsByAnotherStoreInstanceAreNoticed() async throws {
        let (store, directory) = try makeStore()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        let other = try await ChronoStore.open(at: URL(fileURLWithPath: directory.file("test.chrono")), createIfMissing: false)
        let stream = counters.changes()
        try await other.datastore(CounterFormat.self).persist(Counter(id: "a", value: 5))
        try await other.datastore(CounterFormat.self).persist(Counter(id: "z", value: 1))
        let changes = try await collect(2, from: stream)
        #expect(Set(changes.map(\.identifier)) == ["a", "z"])
        #expect(changes.first { $0.identifier == "a" }?.newValue?.value == 5)
        try await other.close()
    }

    @Test func closingTheStoreEndsTheStreams() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let stream = store.datastore(CounterFormat.self).changes()
        try await store.close()
        var count = 0
        for try await _ in stream { count += 1 }
        #expect(count == 0)
    }
}

@Suite struct ObservationStressTests {
    @Test func concurrentWritersDeliverEveryChangeExactlyOnce() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        let stream = counters.changes()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<25 { try await counters.persist(Counter(id: "w\(writer)-\(index)", value: index)) }
                }
            }
            group.addTask { for _ in 0..<10 { _ = try await counters.loadAll().collect() } }
            try await group.waitForAll()
        }
        let changes = try await collect(100, from: stream)
        #expect(changes.count == 100)
        #expect(Set(changes.map(\.identifier)).count == 100)
        #expect(changes.allSatisfy { $0.kind == .created })
    }
}
