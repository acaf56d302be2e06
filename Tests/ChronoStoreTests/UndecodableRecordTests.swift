// One record that does not decode fails only its own load; range loads skip it; persist and delete repair it.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Item: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var name: String
}

/// Another type under the same datastore name and index: its records are not `Item`s, and
/// `Item`s are not its records.
private struct Impostor: Codable, Sendable, Identifiable {
    var id: Int
    var weight: Double
    var label: String
}

private enum ItemFormat: DatastoreFormat {
    typealias Instance = Item
    static let name = "items"
    static let byName = DatastoreIndex<Self, String>.oneToMany("name", \.name)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(byName)] }
}

private enum ImpostorFormat: DatastoreFormat {
    typealias Instance = Impostor
    static let name = "items"
    static let byLabel = DatastoreIndex<Self, String>.oneToMany("name", \.label)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(byLabel)] }
}

@Suite struct UndecodableRecordTests {
    private func identifier(of error: any Error) -> String? {
        guard case ChronoStoreError.undecodableRecord(let datastore, let identifier, _)? = error as? ChronoStoreError else { return nil }
        return datastore + " " + identifier
    }

    @Test func aBadRecordFailsOnlyItsOwnLoadNamingIt() async throws {
        let store = try ChronoStore.inMemory()
        let items = store.datastore(ItemFormat.self)
        try await items.persist(contentsOf: (1...5).map { Item(id: $0, name: "item \($0)") })
        #expect(try await store.datastore(ImpostorFormat.self).persist(Impostor(id: 3, weight: 1.5, label: "heavy")) == nil)
        do {
            _ = try await items.load(3)
            Issue.record("loading the bad record must throw")
        } catch {
            #expect(identifier(of: error) == "items 3", "\(error)")
        }
        #expect(try await items.load(2)?.name == "item 2")
        #expect(try await items.loadAll().collect().map(\.id) == [1, 2, 4, 5])
        #expect(try await items.loadAll(limit: 3).collect().map(\.id) == [1, 2, 4], "a skipped record does not use up the limit")
        var seen: [String] = []
        for try await result in items.loadAll(order: .descending).results() {
            switch result {
            case .success(let item): seen.append("\(item.id)")
            case .failure(let error): seen.append((identifier(of: error) ?? "\(error)") + "!")
            }
        }
        #expect(seen == ["5", "4", "items 3!", "2", "1"])
        // The impostor replaced item 3's index entry with its own; through the index it is skipped too.
        #expect(try await items.load(ItemFormat.byName, in: .all).collect().map(\.id) == [1, 2, 4, 5])
        #expect(try await items.count(ItemFormat.byName, in: .all) == 5)
        // Persisting a good instance over it repairs it, index entry included.
        #expect(try await items.persist(Item(id: 3, name: "again")) == nil)
        #expect(try await items.first(ItemFormat.byName, equalTo: "again")?.id == 3)
        #expect(try await items.count(ItemFormat.byName, in: .all) == 5, "the impostor's entry is gone")
        #expect(try await items.loadAll().collect().count == 5)
    }

    @Test func deletingABadRecordRemovesItAndItsIndexEntries() async throws {
        let store = try ChronoStore.inMemory()
        let items = store.datastore(ItemFormat.self)
        try await items.persist(contentsOf: (1...3).map { Item(id: $0, name: "item \($0)") })
        try await store.datastore(ImpostorFormat.self).persist(Impostor(id: 2, weight: 2, label: "odd"))
        do {
            _ = try await items.delete(2)
            Issue.record("delete of a bad record has no instance to return")
        } catch {
            #expect(identifier(of: error) == "items 2", "\(error)")
        }
        #expect(try await items.count() == 2, "the record was deleted all the same")
        #expect(try await items.count(ItemFormat.byName, in: .all) == 2)
        try await store.datastore(ImpostorFormat.self).persist(Impostor(id: 1, weight: 2, label: "odd"))
        #expect(try await items.deleteIfPresent(1) == nil)
        #expect(try await items.loadAll().collect().map(\.id) == [3])
        #expect(try await items.count(ItemFormat.byName, in: .all) == 1)
    }

    @Test func observersSeeABadRecordAsAbsentAndKeepListening() async throws {
        let store = try ChronoStore.inMemory()
        let items = store.datastore(ItemFormat.self)
        try await items.persist(contentsOf: (1...2).map { Item(id: $0, name: "item \($0)") })
        let changes = items.changes()
        try await store.datastore(ImpostorFormat.self).persist(Impostor(id: 1, weight: 1, label: "bad"))
        try await store.datastore(ImpostorFormat.self).persist(Impostor(id: 9, weight: 1, label: "bad too"))
        try await items.persist(Item(id: 2, name: "edited"))
        try await items.persist(Item(id: 1, name: "repaired"))
        var iterator = changes.makeAsyncIterator()
        var seen: [String] = []
        for _ in 0..<3 {
            guard let change = try await iterator.next() else { break }
            seen.append("\(change.kind) \(change.identifier)")
        }
        #expect(seen == ["deleted 1", "updated 2", "created 1"], "the record that never decoded is not delivered")
    }
}
