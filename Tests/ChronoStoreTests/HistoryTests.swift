// History at the typed level: listing, as-of reads, undo/redo/revert, snapshots, backups, retention.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct HistoryTests {
    @Test func historyListsLabelledRootsNewestFirst() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await store.transaction(label: "One") { try await counters.persist(Counter(id: "a", value: 1)) }
        try await store.transaction(label: "Two") { try await counters.persist(Counter(id: "a", value: 2)) }
        let history = try await store.history()
        #expect(history.map(\.label) == ["Two", "One", nil])
        #expect(history[0].isHead && history[0].parent == history[1].id)
        #expect(try await store.head() == history[0].id)
    }

    @Test func readsAsOfARootADateOrASnapshot() async throws {
        let store = try ChronoStore.inMemory()
        let people = store.datastore(PersonFormat.self)
        try await people.persist(person(1, age: 10))
        let early = try await store.head()
        try await store.createSnapshot(named: "early")
        try await Task.sleep(for: .milliseconds(20))
        let between = Date()
        try await Task.sleep(for: .milliseconds(20))
        try await people.persist(person(1, age: 11))
        try await people.persist(person(2, age: 11))

        for selection in [RootSelection.root(early), .date(between), .snapshot("early")] {
            try await store.read(at: selection) { () async throws in
                #expect(try await people.load(1)?.age == 10)
                #expect(try await people.count() == 1)
                #expect(try await people.loadAll().collect().map(\.id) == [1])
                #expect(try await people.load(PersonFormat.age, equalTo: 10).collect().map(\.id) == [1])
            }
        }
        #expect(try await people.load(PersonFormat.age, equalTo: 11).collect().map(\.id) == [1, 2])
        await #expect(throws: ChronoStoreError.noRootAtOrBefore(millisecondsSince1970: 0)) {
            try await store.read(at: .date(Date(timeIntervalSince1970: 0))) {}
        }
        await #expect(throws: ChronoStoreError.rootNotRetained(RootID(rawValue: 999_999))) {
            try await store.read(at: .root(RootID(rawValue: 999_999))) {}
        }
    }

    @Test func undoRedoAndRevertMoveEveryDatastoreTogether() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let people = store.datastore(PersonFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        let afterFirst = try await store.head()
        try await store.transaction {
            try await counters.persist(Counter(id: "a", value: 2))
            try await people.persist(person(1))
        }
        try await store.undo()
        #expect(try await counters.load("a")?.value == 1)
        #expect(try await people.count() == 0)
        try await store.redo()
        #expect(try await people.count() == 1)
        await #expect(throws: ChronoStoreError.cannotRedo) { try await store.redo() }
        try await store.revert(to: afterFirst, label: "Back")
        #expect(try await counters.load("a")?.value == 1)
        #expect(try await store.history().first?.revertedTo == afterFirst)
        try await store.undo()
        #expect(try await counters.load("a")?.value == 2, "a revert can itself be undone")
        await #expect(throws: ChronoStoreError.cannotUndo(steps: 50, available: 2)) { try await store.undo(steps: 50) }
    }

    @Test func snapshotsAreListedCheckedOutAndDeleted() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        let snapshot = try await store.createSnapshot(named: "v1")
        #expect(snapshot.name == "v1")
        await #expect(throws: ChronoStoreError.snapshotExists("v1")) { try await store.createSnapshot(named: "v1") }
        try await counters.persist(Counter(id: "a", value: 2))
        #expect(try await store.snapshots().map(\.name) == ["v1"])
        try await store.checkoutSnapshot(named: "v1")
        #expect(try await counters.load("a")?.value == 1)
        try await store.deleteSnapshot(named: "v1")
        await #expect(throws: ChronoStoreError.snapshotNotFound("v1")) { try await store.deleteSnapshot(named: "v1") }
        #expect(try await store.snapshots().isEmpty)
    }

    @Test func backupOpensAsAStoreAndRestoreIsUndoable() async throws {
        let (store, directory) = try makeStore()
        let counters = store.datastore(CounterFormat.self)
        try await store.transaction {
            for index in 0..<300 { try await counters.persist(Counter(id: "c\(index)", value: index)) }
        }
        let url = URL(fileURLWithPath: directory.file("backup.chrono"))
        var steps: [CopyProgress] = []
        let summary = try await store.backup(to: url) { steps.append($0) }
        #expect(summary.pageCount > 0 && summary.byteCount > 0)
        #expect(steps.last?.fractionCompleted == 1)
        await #expect(throws: ChronoStoreError.storeAlreadyExists(path: url.path)) { try await store.backup(to: url) }

        try await counters.delete("c0")
        try await store.restore(fromBackup: url)
        #expect(try await counters.count() == 300)
        try await store.undo()
        #expect(try await counters.count() == 299)

        let copy = try await ChronoStore.open(at: url, createIfMissing: false)
        #expect(try await copy.datastore(CounterFormat.self).load("c7")?.value == 7)
        try await copy.close()
    }

    @Test func retentionLimitsUndoDepthAndClearHistoryKeepsTheHead() async throws {
        let store = try ChronoStore.inMemory(options: ChronoStoreOptions(retention: .lastRoots(3)))
        let counters = store.datastore(CounterFormat.self)
        for value in 0..<10 { try await counters.persist(Counter(id: "a", value: value)) }
        #expect(try await store.history().count == 3)
        try await store.setRetention(.limitless)
        for value in 10..<15 { try await counters.persist(Counter(id: "a", value: value)) }
        #expect(try await store.history().count == 8)
        let dropped = try await store.clearHistory()
        #expect(dropped == 7)
        #expect(try await store.history().count == 1)
        #expect(try await counters.load("a")?.value == 14)
        await #expect(throws: ChronoStoreError.cannotUndo(steps: 1, available: 0)) { try await store.undo() }
    }
}
