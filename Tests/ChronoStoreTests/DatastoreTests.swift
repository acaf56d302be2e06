// Persist, load, delete, count and streamed range loads.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct DatastoreTests {
    @Test func persistInsertsOrReplacesAndReturnsTheOldValue() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        #expect(try await counters.persist(Counter(id: "a", value: 1)) == nil)
        #expect(try await counters.persist(Counter(id: "a", value: 2)) == Counter(id: "a", value: 1))
        #expect(try await counters.load("a") == Counter(id: "a", value: 2))
        #expect(try await counters.load("b") == nil)
        #expect(try await counters.count() == 1)
    }

    @Test func deleteReturnsTheOldValueAndAMissingIdIsATypedError() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 1))
        #expect(try await counters.delete("a") == Counter(id: "a", value: 1))
        await #expect(throws: ChronoStoreError.recordNotFound(datastore: "counters", identifier: "a")) {
            try await counters.delete("a")
        }
        #expect(try await counters.deleteIfPresent("a") == nil)
        #expect(try await counters.count() == 0)
        let roots = try await store.history().count
        _ = try await counters.deleteIfPresent("zzz")
        #expect(try await store.history().count == roots, "deleting nothing commits nothing")
    }

    @Test func rangeLoadsHonourBoundsAndOrder() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let people = store.datastore(PersonFormat.self)
        try await store.transaction {
            for id in -5..<20 { try await people.persist(person(id)) }
        }
        func ids(_ bounds: KeyBounds<Int>, _ order: RangeOrder = .ascending) async throws -> [Int] {
            try await people.load(bounds, order: order).collect().map(\.id)
        }
        #expect(try await ids(KeyBounds(0..<5)) == [0, 1, 2, 3, 4])
        #expect(try await ids(KeyBounds(0...5), .descending) == [5, 4, 3, 2, 1, 0])
        #expect(try await ids(KeyBounds(from: .excluding(16))) == [17, 18, 19])
        #expect(try await ids(KeyBounds(from: .excluding(16)), .descending) == [19, 18, 17])
        #expect(try await ids(KeyBounds(..<(-3))) == [-5, -4])
        #expect(try await ids(KeyBounds(...(-4)), .descending) == [-4, -5])
        #expect(try await ids(KeyBounds(from: .excluding(3), to: .excluding(4))) == [])
        #expect(try await ids(.all).count == 25)
        #expect(try await people.loadAll(order: .descending).collect().map(\.id) == Array((-5..<20).reversed()))
    }

    @Test func rangeLoadsStreamInChunksFromOnePinnedRoot() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let counters = store.datastore(CounterFormat.self)
        try await store.transaction {
            for index in 0..<50 { try await counters.persist(Counter(id: String(format: "k%03d", index), value: index)) }
        }
        var sequence = counters.loadAll()
        sequence.chunkSize = 7
        var seen: [Int] = []
        for try await counter in sequence {
            seen.append(counter.value)
            if counter.value == 10 {
                // Commits during the iteration are not seen: the iterator reads one root.
                try await counters.delete("k049")
                try await counters.persist(Counter(id: "k000", value: 999))
            }
        }
        #expect(seen == Array(0..<50))
        #expect(try await counters.count() == 49)
    }

    @Test func compositeIdentifiersRangeOverTheirPrefix() async throws {
        let store = try ChronoStore.inMemory()
        let events = store.datastore(EventFormat.self)
        try await store.transaction {
            for day in ["2026-01-01", "2026-01-02", "2026-01-03"] {
                for sequence in 0..<3 { try await events.persist(Event(day: day, sequence: sequence, text: "\(day) #\(sequence)")) }
            }
        }
        let bounds = KeyBounds(from: .including(KeyTuple2("2026-01-02", Int.min)), to: .including(KeyTuple2("2026-01-02", Int.max)))
        let day = try await events.load(bounds, order: .descending).collect()
        #expect(day.map(\.text) == ["2026-01-02 #2", "2026-01-02 #1", "2026-01-02 #0"])
        #expect(try await events.load(KeyTuple2("2026-01-03", 1))?.text == "2026-01-03 #1")
    }

    @Test func tooLargeIdentifiersAreATypedError() async throws {
        let store = try ChronoStore.inMemory()
        let counters = store.datastore(CounterFormat.self)
        let huge = String(repeating: "x", count: store.maximumKeyByteCount + 10)
        await #expect(throws: ChronoStoreError.self) { try await counters.persist(Counter(id: huge, value: 1)) }
        #expect(try await counters.count() == 0)
    }

    /// A datastore's name names an engine collection and its indexes' collections ("name/index"),
    /// and "$" starts the store's own: a "/" in either name, or a leading "$", is refused before
    /// anything is written; a name of other non-ASCII characters is accepted.
    @Test func namesWithASlashOrALeadingDollarAreRefusedAndWriteNothing() async throws {
        let (store, directory) = try makeStore()
        defer { _ = directory }
        try await store.datastore(CounterFormat.self).persist(Counter(id: "kept", value: 1))
        let rootsBefore = try await store.history(allBranches: true).count
        func refused(_ body: () async throws -> Void) async -> Bool {
            do {
                try await body()
                return false
            } catch ChronoStoreError.invalidOptions {
                return true
            } catch {
                return false
            }
        }
        #expect(await refused { try await store.datastore(SlashNamedFormat.self).persist(Counter(id: "a", value: 1)) })
        #expect(await refused { try await store.datastore(DollarNamedFormat.self).persist(Counter(id: "a", value: 1)) })
        #expect(await refused { try await store.datastore(SlashIndexFormat.self).persist(Counter(id: "a", value: 1)) })
        #expect(await !refused { try await store.datastore(UnicodeNamedFormat.self).persist(Counter(id: "a", value: 1)) })
        #expect(try await store.history(allBranches: true).count == rootsBefore + 1)
        #expect(try await store.datastore(CounterFormat.self).load("kept")?.value == 1)
    }

    @Test func largeRecordsRoundTrip() async throws {
        let store = try ChronoStore.inMemory()
        let people = store.datastore(PersonFormat.self)
        var big = person(1)
        big.name = String(repeating: "long name ", count: 5000)
        try await people.persist(big)
        #expect(try await people.load(1) == big)
    }
}

@Suite struct RangeReleaseTests {
    @Test func aFinishedRangeNoLongerPinsItsRoot() async throws {
        let store = try ChronoStore.inMemory(options: ChronoStoreOptions(retention: .lastRoots(2)))
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "a", value: 0))
        var iterator = counters.loadAll().makeAsyncIterator()
        #expect(try await iterator.next() as Counter? != nil)
        #expect(try await iterator.next() as Counter? == nil)
        for value in 1...5 { try await counters.persist(Counter(id: "a", value: value)) }
        // Were the iterator's root still pinned, retention could not drop it.
        #expect(try await store.history(allBranches: true).count == 2)
        _ = iterator
    }
}

private enum SlashNamedFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "counters/by-value"
}

private enum DollarNamedFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "$counters"
}

private enum SlashIndexFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "indexed-counters"
    static let value = DatastoreIndex<Self, Int>.oneToMany("by/value", \.value)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(value)] }
}

/// Not ASCII, but no "/" and no leading "$": accepted.
private enum UnicodeNamedFormat: DatastoreFormat {
    typealias Instance = Counter
    static let name = "zähler·€"
}
