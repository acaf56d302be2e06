// Single values: one Codable value per key, kept across relaunch, in history, observed, and undone.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Settings: Codable, Sendable, Equatable {
    var theme: String
    var fontSize: Double
    var lastOpened: Date
}

@Suite struct SingleValueTests {
    @Test func aValueSurvivesCloseAndReopenExactly() async throws {
        let directory = try TemporaryDirectory(prefix: "typed")
        let url = URL(fileURLWithPath: directory.file("values.chrono"))
        let settings = Settings(theme: "dark", fontSize: 13.5, lastOpened: Date(timeIntervalSinceReferenceDate: 785_000_000.001237))
        let store = try await ChronoStore.open(at: url)
        #expect(try await store.value(Settings.self, forKey: "settings") == nil)
        try await store.setValue(settings, forKey: "settings")
        try await store.setValue(42, forKey: "launches")
        try await store.close()
        let reopened = try await ChronoStore.open(at: url)
        #expect(try await reopened.value(Settings.self, forKey: "settings") == settings)
        #expect(try await reopened.value(Int.self, forKey: "launches") == 42)
        #expect(try await reopened.removeValue(forKey: "launches"))
        #expect(try await reopened.removeValue(forKey: "launches") == false)
        #expect(try await reopened.value(Int.self, forKey: "launches") == nil)
        try await reopened.close()
    }

    @Test func valuesHaveHistoryUndoAndJoinTransactions() async throws {
        let store = try ChronoStore.inMemory()
        try await store.setValue("first", forKey: "title", label: "Rename")
        let before = try await store.head()
        try await store.setValue("second", forKey: "title", label: "Rename again")
        #expect(try await store.history().first?.label == "Rename again")
        let past = try await store.read(at: .root(before)) { try await store.value(String.self, forKey: "title") }
        #expect(past == "first")
        try await store.undo()
        #expect(try await store.value(String.self, forKey: "title") == "first")
        try await store.redo()
        #expect(try await store.value(String.self, forKey: "title") == "second")
        // A transaction commits a value and a record together, or neither.
        await #expect(throws: CancellationError.self) {
            try await store.transaction {
                try await store.setValue("third", forKey: "title")
                try await store.datastore(CounterFormat.self).persist(Counter(id: "a", value: 1))
                throw CancellationError()
            }
        }
        #expect(try await store.value(String.self, forKey: "title") == "second")
        #expect(try await store.datastore(CounterFormat.self).count() == 0)
        let head = try await store.head()
        try await store.setValue("second", forKey: "title")
        #expect(try await store.head() == head, "writing the stored value commits nothing")
    }

    @Test func observersSeeEachNewValueIncludingUndoAndRemoval() async throws {
        let store = try ChronoStore.inMemory()
        let changes = store.valueChanges(Int.self, forKey: "count")
        try await store.setValue(1, forKey: "count")
        try await store.setValue(7, forKey: "other")
        try await store.setValue(2, forKey: "count")
        try await store.undo(steps: 2)
        try await store.removeValue(forKey: "count")
        var iterator = changes.makeAsyncIterator()
        var seen: [Int?] = []
        for _ in 0..<4 { seen.append(try await iterator.next() ?? -1) }
        #expect(seen == [1, 2, 1, nil])
    }

    @Test func aValueOfAnotherTypeIsATypedErrorNamingItsKey() async throws {
        let store = try ChronoStore.inMemory()
        try await store.setValue("not a number", forKey: "count")
        await #expect(throws: ChronoStoreError.self) { _ = try await store.value(Int.self, forKey: "count") }
        do {
            _ = try await store.value(Settings.self, forKey: "count")
            Issue.record("a String does not decode as Settings")
        } catch ChronoStoreError.undecodableRecord(let datastore, let identifier, _) {
            #expect(datastore == "$values" && identifier == "\"count\"")
        }
    }
}
