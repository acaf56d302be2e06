// Rough performance checks of the typed layer against the budgets; the timed runs are
// opt-in (CHRONO_TYPED_BENCH=1, ideally with -c release), a small smoke run always happens.
import ChronoStore
import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

struct Reading: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var sensor: String
    var value: Double
    var date: Date
    var isValid: Bool
}

enum ReadingFormat: DatastoreFormat {
    typealias Instance = Reading
    static let name = "readings"
}

@Suite struct PerformanceTests {
    static var enabled: Bool { Environment.value("CHRONO_TYPED_BENCH") == "1" }

    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func reading(_ id: Int) -> Reading {
        Reading(id: id, sensor: "sensor-\(id % 10)", value: Double(id) * 0.5, date: Date(timeIntervalSince1970: Double(id)), isValid: id % 2 == 0)
    }

    @Test func manyPersistsInOneTransactionThenLoadsById() async throws {
        let count = Self.enabled ? 100_000 : 2_000
        let (store, directory) = try makeStore()
        _ = directory
        let readings = store.datastore(ReadingFormat.self)
        let insert = try await Self.seconds {
            try await store.transaction {
                for id in 0..<count { try await readings.persist(Self.reading(id)) }
            }
        }
        #expect(try await readings.count() == count)
        let loads = min(count, 20_000)
        let load = try await Self.seconds {
            for id in 0..<loads { _ = try await readings.load(id) }
        }
        let batch = try await Self.seconds {
            try await store.read { for id in 0..<loads { _ = try await readings.load(id) } }
        }
        print("typed bench: \(count) persists in one transaction: \(insert) s; load by id: \(load / Double(loads) * 1e6) µs each on its own, \(batch / Double(loads) * 1e6) µs in one read transaction")
    }

    @Test func durablePersistComparedWithTheRawEngine() async throws {
        let count = Self.enabled ? 300 : 20
        let directory = try TemporaryDirectory(prefix: "typed-bench")
        let store = try ChronoStore.create(at: URL(fileURLWithPath: directory.file("typed.chrono")))
        let readings = store.datastore(ReadingFormat.self)
        let engine = try Store.create(at: directory.file("raw.chrono"))
        let value = try ChronoBinaryCoder().encode(Self.reading(0))
        // Alternate the two, so load on the machine affects both alike.
        var typed = 0.0
        var raw = 0.0
        for id in 0..<count {
            typed += try await Self.seconds { try await readings.persist(Self.reading(id)) }
            raw += try await Self.seconds { try engine.write { try $0.put(id.orderedKeyBytes, value, in: "readings") } }
        }
        try engine.close()
        print("typed bench: durable persist \(typed / Double(count) * 1e6) µs, raw engine put \(raw / Double(count) * 1e6) µs, ratio \(typed / raw)")
    }
}
