// Formats and helpers shared by the typed API tests.
import ChronoStore
import ChronoStoreTestSupport
import Foundation

struct Person: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var name: String
    var email: String
    var age: Int
    var tags: [String]
}

enum PersonFormat: DatastoreFormat {
    typealias Instance = Person
    static let name = "people"
    static let email = DatastoreIndex<Self, String>.oneToOne("email", \.email)
    static let age = DatastoreIndex<Self, Int>.oneToMany("age", \.age)
    static let tags = DatastoreIndex<Self, String>.manyToMany("tags", \.tags)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(email), AnyDatastoreIndex(age), AnyDatastoreIndex(tags)] }
}

struct Event: Codable, Sendable, Equatable {
    var day: String
    var sequence: Int
    var text: String
}

enum EventFormat: DatastoreFormat {
    typealias Instance = Event
    typealias Identifier = KeyTuple2<String, Int>
    static let name = "events"
    static func identifier(of instance: Event) -> KeyTuple2<String, Int> { KeyTuple2(instance.day, instance.sequence) }
}

struct Counter: Codable, Sendable, Identifiable, Equatable {
    var id: String
    var value: Int
}

enum CounterFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "counters"
}

enum JSONCounterFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "json-counters"
    static var coder: ValueCoder { .json }
}

func person(_ id: Int, age: Int = 30, tags: [String] = []) -> Person {
    Person(id: id, name: "Person \(id)", email: "p\(id)@example.com", age: age, tags: tags)
}

/// A fresh store in its own temporary directory; keep the directory alive as long as the store.
func makeStore(
    _ options: ChronoStoreOptions = ChronoStoreOptions(durability: .deferred())
) throws -> (ChronoStore, TemporaryDirectory) {
    let directory = try TemporaryDirectory(prefix: "typed")
    let store = try ChronoStore.create(at: URL(fileURLWithPath: directory.file("test.chrono")), options: options)
    return (store, directory)
}

/// Waits for `count` elements of `stream`, failing after `seconds`.
func collect<Element: Sendable>(
    _ count: Int, from stream: AsyncThrowingStream<Element, any Error>, seconds: Double = 5
) async throws -> [Element] {
    try await withThrowingTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var result: [Element] = []
            for try await element in stream {
                result.append(element)
                if result.count == count { break }
            }
            return result
        }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first ?? []
    }
}
