// Scoped revert: one datastore range goes back to an older root as one new root; the rest stays.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct ScopedRevertTests {
    private func day(_ name: String) -> KeyBounds<KeyTuple2<String, Int>> {
        KeyBounds(from: .including(KeyTuple2(name, Int.min)), to: .including(KeyTuple2(name, Int.max)))
    }

    @Test func revertingOneDocumentLeavesTheOthersAndIsItselfUndoable() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let events = store.datastore(EventFormat.self)
        try await events.persist(contentsOf: (0..<5).flatMap { [Event(day: "mon", sequence: $0, text: "m\($0)"), Event(day: "tue", sequence: $0, text: "t\($0)")] })
        let before = try await store.head()
        try await store.transaction {
            try await events.persist(Event(day: "mon", sequence: 1, text: "edited"))
            try await events.delete(KeyTuple2("mon", 2))
            try await events.persist(Event(day: "mon", sequence: 9, text: "new"))
            try await events.persist(Event(day: "tue", sequence: 1, text: "tuesday edit"))
        }
        let roots = try await store.history().count

        #expect(try await store.revert(EventFormat.self, in: day("mon"), to: before, label: "Undo Monday") == 3)
        #expect(try await events.load(day("mon")).collect().map(\.text) == ["m0", "m1", "m2", "m3", "m4"])
        #expect(try await events.load(KeyTuple2("tue", 1))?.text == "tuesday edit")
        let history = try await store.history()
        #expect(history.count == roots + 1)
        #expect(history.first?.label == "Undo Monday")
        // Reverting again changes nothing and commits nothing.
        #expect(try await events.revert(in: day("mon"), to: .root(before)) == 0)
        #expect(try await store.history().count == roots + 1)
        // The revert is a forward edit: undoing it brings Monday's edits back.
        try await store.undo()
        #expect(try await events.load(day("mon")).collect().map(\.text) == ["m0", "edited", "m3", "m4", "new"])
    }

    @Test func aRevertedRangeGetsItsIndexEntriesOfThen() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (1...5).map { person($0, age: 20 + $0, tags: ["v1"]) })
        try await people.persist(person(50, age: 22))
        let before = try await store.head()
        try await people.delete(2)
        try await people.persist(person(3, age: 99, tags: ["v2"]))
        try await people.persist(person(6, age: 21))
        try await people.persist(person(50, age: 23))

        #expect(try await people.revert(in: KeyBounds(1...10), to: .root(before)) == 3)
        #expect(try await people.loadAll().collect().map(\.id) == [1, 2, 3, 4, 5, 50])
        #expect(try await people.load(PersonFormat.age, equalTo: 22).collect().map(\.id) == [2])  // 50 keeps its edit
        #expect(try await people.load(PersonFormat.age, equalTo: 99).collect().isEmpty)
        #expect(try await people.count(PersonFormat.tags, in: KeyBounds("v1"..."v1")) == 5)
        #expect(try await people.count(PersonFormat.tags, in: KeyBounds("v2"..."v2")) == 0)
        #expect(try await people.first(PersonFormat.email, equalTo: person(6).email) == nil)
        #expect(try await store.verify().isSound)
    }

    @Test func uniqueValuesTradedInsideTheRangeDoNotConflictButOneHeldOutsideDoes() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: [person(1), person(2), person(10)])
        let before = try await store.head()
        try await store.transaction {
            var one = person(1), two = person(2)
            (one.email, two.email) = ("swap@example.com", person(1).email)
            try await people.persist(one)
            try await people.persist(two)
            one.email = person(2).email
            try await people.persist(one)
        }
        #expect(try await people.revert(in: KeyBounds(1...2), to: .root(before)) == 2)
        #expect(try await people.first(PersonFormat.email, equalTo: person(1).email)?.id == 1)
        #expect(try await people.first(PersonFormat.email, equalTo: person(2).email)?.id == 2)

        // Record 10 takes record 1's old address; putting 1 back would break the unique index.
        let beforeDelete = try await store.head()
        try await people.delete(1)
        var ten = person(10)
        ten.email = person(1).email
        try await people.persist(ten)
        let head = try await store.head()
        await #expect(throws: ChronoStoreError.self) { try await people.revert(in: KeyBounds(1...1), to: .root(beforeDelete)) }
        #expect(try await store.head() == head)
        #expect(try await people.load(1) == nil)
    }

    @Test func aRecordComesBackFromASnapshotAndAnUnretainedRootIsATypedError() async throws {
        let (store, directory) = try makeStore(ChronoStoreOptions(durability: .deferred(), retention: .lastRoots(3)))
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "note", value: 1))
        let first = try await store.head()
        try await store.createSnapshot(named: "tuesday")
        for value in 2...8 { try await counters.persist(Counter(id: "note", value: value)) }
        try await counters.persist(Counter(id: "other", value: 0))
        #expect(try await counters.revert(in: KeyBounds("note"..."note"), to: .snapshot("tuesday")) == 1)
        #expect(try await counters.load("note")?.value == 1)
        #expect(try await counters.load("other")?.value == 0)
        try await store.deleteSnapshot(named: "tuesday")
        try await store.prune()
        do {
            try await counters.revert(to: .root(first))
            Issue.record("reverted to a pruned root")
        } catch ChronoStoreError.rootNotRetained {}
    }
}
