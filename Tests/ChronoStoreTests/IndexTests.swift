// Indexes: unique, one-to-many and many-to-many; exact and range queries; warm() builds new ones.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

/// The same records as `PersonFormat`, before any index was declared.
enum PlainPersonFormat: DatastoreFormat {
    typealias Instance = Person
    static let name = "people"
}

@Suite struct IndexTests {
    /// A transaction that writes one datastore, another, and the first through a second format of
    /// the same name keeps every declared index of each format it writes through: the list of
    /// built indexes a transaction keeps between writes belongs to one format (an empty list kept
    /// for `PlainPersonFormat` must not pass for `PersonFormat`'s).
    @Test func writesAlternatingBetweenDatastoresAndFormatsKeepTheirIndexes() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        let plain = store.datastore(PlainPersonFormat.self)
        let counters = store.datastore(CounterFormat.self)
        try await people.persist(person(0))
        try await store.transaction {
            for id in 1...40 {
                try await people.persist(person(id, age: 20 + id % 3, tags: ["t\(id % 2)"]))
                try await counters.persist(Counter(id: "c\(id)", value: id))
            }
            try await people.persist(person(41))
            try await plain.persist(person(42))
            try await plain.persist(person(43))
            try await people.persist(person(44, age: 99))
            try await people.persist(person(45, age: 99))
        }
        #expect(try await people.load(PersonFormat.age, equalTo: 21).collect().map(\.id) == Array(stride(from: 1, through: 40, by: 3)))
        #expect(try await people.load(PersonFormat.tags, equalTo: "t0").collect().count == 20)
        #expect(try await people.load(PersonFormat.age, equalTo: 99).collect().map(\.id) == [44, 45])
        for id in [0, 1, 40, 41, 44, 45] {
            #expect(try await people.first(PersonFormat.email, equalTo: "p\(id)@example.com")?.id == id)
        }
        #expect(try await counters.count() == 40)
    }

    @Test func uniqueIndexViolationIsATypedErrorAndRollsBack() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(person(1))
        var clash = person(2)
        clash.email = person(1).email
        do {
            try await store.transaction {
                try await people.persist(person(3))
                try await people.persist(clash)
            }
            Issue.record("the clash was accepted")
        } catch let error as ChronoStoreError {
            guard case .uniqueIndexViolation(let datastore, let index, let existing, let conflicting) = error else { throw error }
            #expect(datastore == "people" && index == "email" && existing == "1" && conflicting == "2")
        }
        #expect(try await people.count() == 1, "person 3 rolled back with the failed transaction")
        // Changing one's own unique value, or keeping it, is fine.
        var moved = person(1)
        moved.email = "new@example.com"
        try await people.persist(moved)
        try await people.persist(moved)
        #expect(try await people.first(PersonFormat.email, equalTo: "new@example.com")?.id == 1)
        #expect(try await people.first(PersonFormat.email, equalTo: person(1).email) == nil)
        clash.email = person(1).email
        try await people.persist(clash)
        #expect(try await people.first(PersonFormat.email, equalTo: person(1).email)?.id == 2)
    }

    @Test func oneToManyQueriesByValueAndRangeInOrder() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await store.transaction {
            for id in 0..<30 { try await people.persist(person(id, age: 20 + id % 5)) }
        }
        let aged22 = try await people.load(PersonFormat.age, equalTo: 22).collect().map(\.id)
        #expect(aged22 == [2, 7, 12, 17, 22, 27])
        let reversed = try await people.load(PersonFormat.age, equalTo: 22, order: .descending).collect().map(\.id)
        #expect(reversed == aged22.reversed())
        let range = try await people.load(PersonFormat.age, in: KeyBounds(23...24)).collect()
        #expect(range.map(\.age) == Array(repeating: 23, count: 6) + Array(repeating: 24, count: 6))
        #expect(try await people.load(PersonFormat.age, in: KeyBounds(from: .excluding(23))).collect().count == 6)
        #expect(try await people.load(PersonFormat.age, in: KeyBounds(..<21)).collect().count == 6)
        // Updates move index entries; deletes remove them.
        var changed = person(2, age: 40)
        changed.name = "moved"
        try await people.persist(changed)
        try await people.delete(7)
        #expect(try await people.load(PersonFormat.age, equalTo: 22).collect().map(\.id) == [12, 17, 22, 27])
        #expect(try await people.load(PersonFormat.age, equalTo: 40).collect().map(\.name) == ["moved"])
    }

    @Test func manyToManyIndexesEachElementOnce() async throws {
        let store = try ChronoStore.inMemory()
        let people = store.datastore(PersonFormat.self)
        try await people.persist(person(1, tags: ["swift", "rust", "swift"]))
        try await people.persist(person(2, tags: ["swift"]))
        try await people.persist(person(3, tags: []))
        #expect(try await people.load(PersonFormat.tags, equalTo: "swift").collect().map(\.id) == [1, 2])
        #expect(try await people.load(PersonFormat.tags, equalTo: "rust").collect().map(\.id) == [1])
        let all = try await people.load(PersonFormat.tags, in: .all).collect().map(\.id)
        #expect(all == [1, 1, 2], "ordered by value (rust < swift), then identifier")
        try await people.persist(person(1, tags: ["go"]))
        #expect(try await people.load(PersonFormat.tags, equalTo: "swift").collect().map(\.id) == [2])
    }

    @Test func indexesFollowUndoBecauseTheyLiveInTheSameRoot() async throws {
        let store = try ChronoStore.inMemory()
        let people = store.datastore(PersonFormat.self)
        try await people.persist(person(1, age: 30))
        try await people.persist(person(1, age: 31))
        try await store.undo()
        #expect(try await people.load(PersonFormat.age, equalTo: 30).collect().map(\.id) == [1])
        #expect(try await people.load(PersonFormat.age, equalTo: 31).collect().isEmpty)
    }

    /// `warm()` inside a transaction builds indexes the transaction's earlier writes found not
    /// built; writes after it in the same transaction maintain them (the list of built indexes a
    /// transaction keeps between writes is dropped when warm records new ones).
    @Test func writesAfterWarmInTheSameTransactionMaintainTheIndexesItBuilt() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let plain = store.datastore(PlainPersonFormat.self)
        let people = store.datastore(PersonFormat.self)
        try await plain.persist(person(0))
        try await store.transaction {
            try await people.persist(person(1, age: 77))
            try await people.persist(person(2, age: 77))
            #expect(Set(try await people.warm().builtIndexes) == ["email", "age", "tags"])
            try await people.persist(person(3, age: 77))
            try await people.persist(person(4, age: 77))
        }
        #expect(try await people.load(PersonFormat.age, equalTo: 77).collect().map(\.id) == [1, 2, 3, 4])
        #expect(try await people.first(PersonFormat.email, equalTo: "p4@example.com")?.id == 4)
    }

    @Test func anIndexAddedLaterIsBuiltByWarmWithProgress() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let plain = store.datastore(PlainPersonFormat.self)
        try await store.transaction {
            for id in 0..<600 { try await plain.persist(person(id, age: id % 3, tags: ["t\(id % 2)"])) }
        }
        let people = store.datastore(PersonFormat.self)
        var iterator = people.load(PersonFormat.age, equalTo: 1).makeAsyncIterator()
        await #expect(throws: ChronoStoreError.indexNotBuilt(datastore: "people", index: "age")) { _ = try await iterator.next() as Person? }
        var steps: [WarmProgress] = []
        let report = try await people.warm { steps.append($0) }
        #expect(Set(report.builtIndexes) == ["email", "age", "tags"])
        #expect(steps.last == WarmProgress(recordsDone: 600, recordsTotal: 600))
        #expect(steps.count == 3)
        #expect(try await people.load(PersonFormat.age, equalTo: 1).collect().count == 200)
        #expect(try await people.load(PersonFormat.tags, equalTo: "t0").collect().count == 300)
        // Warm again: nothing to do.
        #expect(try await people.warm().builtIndexes.isEmpty)
        // Dropping the indexes from the format drops their collections at the next write.
        try await plain.persist(person(1000))
        await #expect(throws: ChronoStoreError.self) { _ = try await people.load(PersonFormat.age, equalTo: 1).collect() }
    }

    @Test func warmRefusesAUniqueIndexThatExistingRecordsViolate() async throws {
        let store = try ChronoStore.inMemory()
        let plain = store.datastore(PlainPersonFormat.self)
        var twin = person(2)
        twin.email = person(1).email
        try await plain.persist(person(1))
        try await plain.persist(twin)
        let people = store.datastore(PersonFormat.self)
        await #expect(throws: ChronoStoreError.self) { try await people.warm() }
        #expect(try await people.count() == 2)
    }
}

enum BadIndexFormat: DatastoreFormat {
    typealias Instance = Person
    static let name = "bad"
    static let first = DatastoreIndex<Self, Int>.oneToMany("age", \.age)
    static let second = DatastoreIndex<Self, String>.oneToMany("age", \.name)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(first), AnyDatastoreIndex(second)] }
}

enum BadNameFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "$reserved"
}

@Suite struct FormatValidationTests {
    @Test func duplicateIndexNamesAndReservedDatastoreNamesAreRefused() async throws {
        let store = try ChronoStore.inMemory()
        await #expect(throws: ChronoStoreError.self) { try await store.datastore(BadIndexFormat.self).persist(person(1)) }
        await #expect(throws: ChronoStoreError.self) { try await store.datastore(BadNameFormat.self).persist(Counter(id: "a", value: 1)) }
        #expect(try await store.history().count == 1, "nothing was committed")
    }
}
