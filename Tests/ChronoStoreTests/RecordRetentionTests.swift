// Record retention: a datastore capped by count and age, enforced in the writing transaction.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

struct LogLine: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var date: Date
    var text: String
}

/// Keeps the five largest identifiers.
enum CappedLogFormat: DatastoreFormat {
    typealias Instance = LogLine
    static let name = "capped-log"
    static var recordRetention: RecordRetention<Self>? { .newest(5) }
}

/// Keeps the three newest by date, and nothing older than 30 days.
enum DatedLogFormat: DatastoreFormat {
    typealias Instance = LogLine
    static let name = "dated-log"
    static let date = DatastoreIndex<Self, Date>.oneToMany("date", \.date)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(date)] }
    static var recordRetention: RecordRetention<Self>? { RecordRetention.newest(3, by: date).youngerThan(30 * 86_400, by: date) }
}

@Suite struct RecordRetentionTests {
    private func line(_ id: Int, daysAgo: Double = 0) -> LogLine {
        LogLine(id: id, date: Date().addingTimeInterval(-daysAgo * 86_400), text: "line \(id)")
    }

    @Test func aCountCapKeepsTheLargestIdentifiersInTheSameCommit() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let log = store.datastore(CappedLogFormat.self)
        for id in 1...5 { try await log.persist(line(id)) }
        let roots = try await store.history().count
        try await log.persist(line(6))
        #expect(try await store.history().count == roots + 1)  // the trim is part of the write's commit
        #expect(try await log.loadAll().collect().map(\.id) == [2, 3, 4, 5, 6])
        try await log.persist(contentsOf: (7...20).map { line($0) })
        #expect(try await log.loadAll().collect().map(\.id) == Array(16...20))
        // A record below the cap goes at once; the trimmed records are still in history.
        try await log.persist(line(0))
        #expect(try await log.load(0) == nil)
        try await store.undo(steps: 2)
        #expect(try await log.loadAll().collect().map(\.id) == [2, 3, 4, 5, 6])
    }

    @Test func anIndexAndAgeCapDropsTheOldestByDateWithTheirIndexEntries() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let log = store.datastore(DatedLogFormat.self)
        try await log.persist(line(1, daysAgo: 40))
        #expect(try await log.count() == 0)  // older than 30 days: dropped by the write that added it
        try await log.persist(contentsOf: [line(10, daysAgo: 3), line(11, daysAgo: 1), line(12, daysAgo: 2), line(13, daysAgo: 29)])
        #expect(try await log.load(DatedLogFormat.date, in: .all).collect().map(\.id) == [10, 12, 11])
        try await log.persist(line(2, daysAgo: 0.5))
        #expect(try await log.load(DatedLogFormat.date, in: .all, order: .descending).collect().map(\.id) == [2, 11, 12])
        #expect(try await log.count(DatedLogFormat.date, in: .all) == 3)
        #expect(try await store.verify().isSound)
    }

    @Test func theCapAppliesInsideAnExplicitTransactionAndRollsBackWithIt() async throws {
        let (store, directory) = try makeStore()
        _ = directory
        let log = store.datastore(CappedLogFormat.self)
        try await log.persist(contentsOf: (1...5).map { line($0) })
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await store.transaction {
                try await log.persist(line(9))
                #expect(try await log.count() == 5)
                #expect(try await log.load(1) == nil)
                throw Stop()
            }
        }
        #expect(try await log.loadAll().collect().map(\.id) == [1, 2, 3, 4, 5])
    }
}
