// A randomized model test: persists, deletes, transactions that roll back, undo and redo, checked
// against an in-memory model of records and of every index after each step.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct DatastoreModelTests {
    typealias Model = [Int: Person]

    @Test func recordsAndIndexesMatchAModelThroughRandomOperationsAndUndo() async throws {
        let seed = SeededGenerator.seed()
        print("DatastoreModelTests seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        let store = try ChronoStore.inMemory(options: ChronoStoreOptions(retention: .limitless))
        let people = store.datastore(PersonFormat.self)
        var model: Model = [:]
        var undone: [Model] = []  // models to return to on redo
        var past: [Model] = [model]  // the model at each root on the head's line

        for step in 0..<150 {
            let id = Int(generator.next() % 20)
            switch generator.next() % 10 {
            case 0...4:
                let candidate = Self.randomPerson(id, &generator)
                let clashes = model.values.contains { $0.id != id && $0.email == candidate.email }
                do {
                    try await people.persist(candidate)
                    #expect(!clashes, "step \(step): a unique clash was accepted, seed \(seed)")
                    model[id] = candidate
                    past.append(model)
                    undone = []
                } catch let error as ChronoStoreError {
                    guard case .uniqueIndexViolation = error else { throw error }
                    #expect(clashes, "step \(step): spurious clash, seed \(seed)")
                }
            case 5, 6:
                if try await people.deleteIfPresent(id) != nil {
                    model[id] = nil
                    past.append(model)
                    undone = []
                }
            case 7:
                try? await store.transaction {
                    try await people.persist(Self.randomPerson(id, &generator))
                    throw Oops()
                }
            case 8:
                if past.count > 1 {
                    try await store.undo()
                    undone.append(past.removeLast())
                    model = past.last!
                }
            default:
                if let next = undone.popLast() {
                    try await store.redo()
                    past.append(next)
                    model = next
                }
            }
            try await Self.check(people, against: model, step: step, seed: seed)
        }
    }

    static func randomPerson(_ id: Int, _ generator: inout SeededGenerator) -> Person {
        let tags = ["a", "b", "c", "d"].filter { _ in generator.next() % 3 == 0 }
        return Person(
            id: id, name: "n\(generator.next() % 100)", email: "e\(generator.next() % 30)@x", age: Int(generator.next() % 5),
            tags: tags)
    }

    static func check(_ people: Datastore<PersonFormat>, against model: Model, step: Int, seed: UInt64) async throws {
        let all = try await people.loadAll().collect()
        #expect(all.map(\.id) == model.keys.sorted(), "step \(step), seed \(seed)")
        #expect(try await people.count() == model.count)
        for age in 0..<5 {
            let expected = model.values.filter { $0.age == age }.map(\.id).sorted()
            #expect(try await people.load(PersonFormat.age, equalTo: age).collect().map(\.id) == expected, "age \(age), step \(step), seed \(seed)")
        }
        for tag in ["a", "b", "c", "d"] {
            let expected = model.values.filter { $0.tags.contains(tag) }.map(\.id).sorted()
            #expect(try await people.load(PersonFormat.tags, equalTo: tag).collect().map(\.id) == expected, "tag \(tag), step \(step), seed \(seed)")
        }
        let byEmail = try await people.load(PersonFormat.email, in: .all).collect().map(\.email)
        #expect(byEmail == model.values.map(\.email).sorted(by: { $0.orderedKeyBytes.lexicographicallyPrecedes($1.orderedKeyBytes) }))
    }
}
