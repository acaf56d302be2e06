// Paged loads, first and last records, range counts, and range and bulk deletes.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct PagingTests {
    @Test func pagesOfAnIdentifierRangeAddUpToTheWholeRangeInOrder() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (0..<300).map { person($0, age: $0 % 7) })
        var seen: [Int] = []
        var after: Int?
        while true {
            let bounds = after.map { KeyBounds<Int>(from: .excluding($0)) } ?? .all
            var sequence = people.load(bounds, limit: 64)
            sequence.chunkSize = 10  // pages span several chunks
            let page = try await sequence.collect().map(\.id)
            #expect(page.count <= 64)
            if page.isEmpty { break }
            seen += page
            after = page.last
        }
        #expect(seen == Array(0..<300))
        #expect(try await people.loadAll(order: .descending, limit: 3).collect().map(\.id) == [299, 298, 297])
        #expect(try await people.loadAll(limit: 0).collect().isEmpty)
        #expect(try await people.load(PersonFormat.age, equalTo: 3, limit: 5).collect().map(\.id) == [3, 10, 17, 24, 31])
        #expect(try await people.loadAll().prefix(2).collect().map(\.id) == [0, 1])
    }

    @Test func firstAndLastFollowIdentifiersOrIndexValuesAndAreNilWhenEmpty() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        #expect(try await people.first() == nil)
        #expect(try await people.last(by: PersonFormat.age) == nil)
        try await people.persist(contentsOf: [person(5, age: 40), person(2, age: 70), person(9, age: 20), person(7, age: 70)])
        #expect(try await people.first()?.id == 2)
        #expect(try await people.last()?.id == 9)
        #expect(try await people.first(by: PersonFormat.age)?.id == 9)
        #expect(try await people.last(by: PersonFormat.age)?.id == 7)  // ties: the largest identifier
        #expect(try await people.first(by: PersonFormat.email)?.id == 2)  // "p2@..." sorts first
    }

    @Test func rangeCountsMatchTheRecordsARangeLoadReturns() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (0..<100).map { person($0, age: $0 / 10, tags: $0 % 2 == 0 ? ["even", "x"] : ["x"]) })
        #expect(try await people.count(in: KeyBounds(10..<25)) == 15)
        #expect(try await people.count(in: KeyBounds(90...)) == 10)
        #expect(try await people.count(in: .all) == 100)
        #expect(try await people.count(PersonFormat.age, in: KeyBounds(2...4)) == 30)
        #expect(try await people.count(PersonFormat.age, in: KeyBounds(from: .excluding(8))) == 10)
        // A many-to-many index counts a record once per matching value.
        #expect(try await people.count(PersonFormat.tags, in: .all) == 150)
        #expect(try await people.count(PersonFormat.tags, in: KeyBounds("x"..."x")) == 100)
        let inTransaction = try await store.transaction {
            try await people.delete(5)
            return try await people.count(in: KeyBounds(0..<10))
        }
        #expect(inTransaction == 9)
    }

    @Test func aRangeDeleteIsOneRootAndRemovesIndexEntries() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (0..<50).map { person($0, age: $0 % 5, tags: ["t\($0 % 3)"]) })
        let roots = try await store.history().count
        #expect(try await people.delete(in: KeyBounds(10..<20)) == 10)
        #expect(try await store.history().count == roots + 1)
        #expect(try await people.count() == 40)
        #expect(try await people.count(PersonFormat.age, in: .all) == 40)
        #expect(try await people.load(PersonFormat.tags, in: .all).collect().allSatisfy { !(10..<20).contains($0.id) })
        // The unique index entry went with the record: its email can be used again.
        var reused = person(100)
        reused.email = person(12).email
        try await people.persist(reused)
        #expect(try await people.first(PersonFormat.email, equalTo: person(12).email)?.id == 100)
        // Deleting an empty range commits nothing.
        #expect(try await people.delete(in: KeyBounds(10..<20)) == 0)
        #expect(try await store.history().count == roots + 2)
    }

    @Test func deletingByAnIndexRangeAndDeletingAllCanBeUndone() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await people.persist(contentsOf: (0..<40).map { person($0, age: $0 % 4, tags: ["a", "b"]) })
        #expect(try await people.delete(PersonFormat.age, in: KeyBounds(1...2)) == 20)
        #expect(try await people.loadAll().collect().map(\.id) == (0..<40).filter { $0 % 4 == 0 || $0 % 4 == 3 })
        // Each record is deleted once even when several of its many-to-many values match.
        #expect(try await people.delete(PersonFormat.tags, in: .all) == 20)
        #expect(try await people.count() == 0)
        try await store.undo()
        #expect(try await people.count() == 20)
        #expect(try await people.deleteAll() == 20)
        #expect(try await people.count() == 0)
        #expect(try await people.count(PersonFormat.tags, in: .all) == 0)
        try await people.persist(person(1, age: 1))
        #expect(try await people.load(PersonFormat.age, equalTo: 1).collect().map(\.id) == [1])
        #expect(try await store.verify().isSound)
    }

    @Test func rangeCountsAndDeletesAgreeWithAModel() async throws {
        let seed = SeededGenerator.seed()
        print("rangeCountsAndDeletesAgreeWithAModel seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        var model: [Int: Int] = [:]  // id → age
        for _ in 0..<20 {
            let batch = (0..<20).map { _ in person(Int.random(in: 0..<500, using: &random), age: Int.random(in: 0..<30, using: &random)) }
            try await people.persist(contentsOf: batch)
            for one in batch { model[one.id] = one.age }
            let (low, high) = (Int.random(in: 0..<500, using: &random), Int.random(in: 0..<500, using: &random))
            let ids = KeyBounds(min(low, high)...max(low, high))
            #expect(try await people.count(in: ids) == model.keys.filter { (min(low, high)...max(low, high)).contains($0) }.count)
            let above = Int.random(in: 0..<30, using: &random)
            let ages = KeyBounds<Int>(from: .excluding(above))
            let matching = model.filter { $0.value > above }
            #expect(try await people.count(PersonFormat.age, in: ages) == matching.count)
            if Bool.random(using: &random) {
                #expect(try await people.delete(PersonFormat.age, in: ages) == matching.count)
                for id in matching.keys { model[id] = nil }
            } else {
                #expect(try await people.delete(in: ids) == model.keys.filter { (min(low, high)...max(low, high)).contains($0) }.count)
                for id in Array(model.keys) where (min(low, high)...max(low, high)).contains(id) { model[id] = nil }
            }
            #expect(try await people.loadAll().collect().map(\.id) == model.keys.sorted())
        }
    }
}
