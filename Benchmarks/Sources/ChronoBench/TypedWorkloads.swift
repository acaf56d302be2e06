// The typed workloads of issue 7: persist and load a small Codable struct, against GRDB records.

import ChronoStore
import Foundation
import GRDB
import TypedEvents

/// Runs on the public `ChronoStore` API and on GRDB's Codable records:
/// 1. persisting `typedRecordCount` new ``TypedItem``s in one durable transaction (ChronoStore
///    `persist`, which also returns the previous value, against GRDB `insert(onConflict: .replace)`);
/// 2. loading each of them by id, in random order, in one read transaction (ChronoStore `load`
///    against `TypedItem.fetchOne` on a prepared `SELECT * FROM items WHERE id = ?`; GRDB's
///    `fetchOne(_:key:)` builds its query on every call and is several times slower).
///
/// 3. an app's write path (issue 14): `typedRecordCount / 10` durable transactions of one
///    ``TypedEvent`` each, whose date is indexed (ChronoStore `persist` with a `oneToMany` date
///    index against GRDB `insert` into a table with `CREATE INDEX` on the date);
/// 4. the same from 8 tasks at once, as many transactions in all (ChronoStore's tasks share syncs;
///    GRDB's queue takes the threads' writes in turn, each its own sync).
///
/// The GRDB table is `items(id INTEGER PRIMARY KEY, name TEXT, score REAL, tags TEXT)`; GRDB
/// stores the tags array as JSON text. Both sides use a 64 MiB cache and sync as `.durable`/FULL;
/// ChronoStore keeps one root (`.lastRoots(1)`), as SQLite keeps no history.
struct TypedWorkloads {
    static let group = "typed"

    let scale: WorkloadScale
    let scratch: ScratchDirectory
    let cacheByteCount: Int
    let seed: UInt64

    func run(_ runner: ComparisonRunner) throws {
        let items = (0..<scale.typedRecordCount).map(TypedItem.init(id:))
        var generator = SeededGenerator(seed: seed)
        let ids = generator.indices(count: scale.typedRecordCount, below: scale.typedRecordCount)
        let options = ChronoStoreOptions(durability: .durable, retention: .lastRoots(1), cacheByteCount: cacheByteCount)
        let store = try ChronoStore.open(at: URL(fileURLWithPath: scratch.file("typed.chrono")), options: options)
        let datastore = store.datastore(TypedItemFormat.self)
        let queue = try SQLiteDatabase.open(
            path: scratch.file("typed.sqlite"), cacheByteCount: cacheByteCount, mode: .durable)
        defer {
            try? blockingAwait { try await store.close() }
            try? queue.close()
            scratch.removeStore("typed.chrono")
            scratch.removeStore("typed.sqlite")
        }
        try queue.write { database in
            try database.create(table: TypedItem.databaseTableName) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("score", .double).notNull()
                table.column("tags", .text).notNull()
            }
        }

        try runner.compare(
            "typed: persist \(items.count) structs, 1 transaction", group: Self.group, operationCount: items.count,
            sync: .durable,
            chronoStore: { _ in
                try blockingAwait {
                    try await store.transaction {
                        for item in items { _ = try await datastore.persist(item) }
                    }
                }
                return nil
            },
            sqlite: { _ in
                try queue.write { database in
                    for item in items { try item.insert(database, onConflict: .replace) }
                }
                return nil
            })
        try runner.compare(
            "typed: load \(ids.count) structs by id", group: Self.group, operationCount: ids.count,
            runs: scale.repetitions,
            chronoStore: { _ in
                try blockingAwait {
                    try await store.read {
                        var tally = ReadTally()
                        for id in ids {
                            if let item = try await datastore.load(id) { tally.add(Array(item.name.utf8)) }
                        }
                        return tally
                    }
                }
            },
            sqlite: { _ in
                try queue.read { database in
                    let statement = try database.cachedStatement(sql: "SELECT * FROM items WHERE id = ?")
                    var tally = ReadTally()
                    for id in ids {
                        statement.setUncheckedArguments([id])
                        if let item = try TypedItem.fetchOne(statement) { tally.add(Array(item.name.utf8)) }
                    }
                    return tally
                }
            })
        try appendDatedEvents(runner, store: store, queue: queue)
    }

    /// One durable transaction per event, each persisting it and its date index entry.
    private func appendDatedEvents(_ runner: ComparisonRunner, store: ChronoStore, queue: DatabaseQueue) throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let events = (0..<max(scale.typedRecordCount / 10, 1)).map { TypedEvent(id: $0, start: start) }
        let datastore = store.datastore(TypedEventFormat.self)
        try queue.write { database in
            try database.create(table: TypedEvent.databaseTableName) { table in
                table.primaryKey("id", .integer)
                table.column("date", .datetime).notNull().indexed()
                table.column("kind", .text).notNull()
                table.column("note", .text).notNull()
            }
        }
        try runner.compare(
            "typed: \(events.count) durable transactions, 1 struct with a date index each", group: Self.group,
            operationCount: events.count, sync: .durable, target: 1,
            chronoStore: { _ in
                try blockingAwait {
                    for event in events {
                        try await store.transaction { _ = try await datastore.persist(event) }
                    }
                }
                return nil
            },
            sqlite: { _ in
                // An upsert, as `persist` is (which also returns the previous value).
                for event in events {
                    try queue.write { database in try event.insert(database, onConflict: .replace) }
                }
                return nil
            })
        // Both sides kept every event and find one by its date.
        let probe = events[events.count / 2]
        let (found, count) = try blockingAwait {
            (try await datastore.load(TypedEventFormat.date, equalTo: probe.date).collect(), try await datastore.count(in: .all))
        }
        let (sqliteFound, sqliteCount) = try queue.read { database in
            (try TypedEvent.filter(Column("date") == probe.date).fetchAll(database), try TypedEvent.fetchCount(database))
        }
        guard found == [probe], sqliteFound == [probe], count == events.count, sqliteCount == events.count else {
            throw BenchmarkError.workloadFailed("typed events: \(count) and \(sqliteCount) events stored, the one dated \(probe.date) found \(found.count) and \(sqliteFound.count) times")
        }
        try appendDatedEventsFromTasks(runner, store: store, queue: queue, firstID: events.count, start: start)
    }

    /// The same app write path from `Self.committingTasks` tasks at once (threads for SQLite, whose
    /// queue takes their writes in turn): ChronoStore's tasks share syncs (group commit).
    private func appendDatedEventsFromTasks(
        _ runner: ComparisonRunner, store: ChronoStore, queue: DatabaseQueue, firstID: Int, start: Date
    ) throws {
        let tasks = Self.committingTasks
        let perTask = max(scale.typedRecordCount / 10 / tasks, 1)
        let batches = (0..<tasks).map { task in
            (0..<perTask).map { TypedEvent(id: firstID + task * perTask + $0, start: start) }
        }
        let datastore = store.datastore(TypedEventFormat.self)
        try runner.compare(
            "typed: \(tasks) tasks × \(perTask) durable transactions at once, 1 struct with a date index each",
            group: Self.group, operationCount: tasks * perTask, sync: .durable,
            chronoStore: { _ in
                try blockingAwait {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for batch in batches {
                            group.addTask {
                                for event in batch { try await store.transaction { _ = try await datastore.persist(event) } }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                return nil
            },
            sqlite: { _ in
                let failures = FirstFailure()
                DispatchQueue.concurrentPerform(iterations: tasks) { task in
                    do {
                        for event in batches[task] {
                            try queue.write { database in try event.insert(database, onConflict: .replace) }
                        }
                    } catch {
                        failures.record(error)
                    }
                }
                if let error = failures.first { throw error }
                return nil
            })
        let expected = firstID + tasks * perTask
        let (count, sqliteCount) = (
            try blockingAwait { try await datastore.count(in: .all) }, try queue.read { try TypedEvent.fetchCount($0) }
        )
        guard count == expected, sqliteCount == expected else {
            throw BenchmarkError.workloadFailed("typed events from tasks: \(count) and \(sqliteCount) events stored, \(expected) expected")
        }
    }

    /// How many tasks commit at once in the concurrent app write path (as the core group row's threads).
    static let committingTasks = 8
}

/// The first error any of several threads met. `@unchecked Sendable`: `error` is guarded by `lock`.
private final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?

    func record(_ error: any Error) {
        lock.lock()
        if self.error == nil { self.error = error }
        lock.unlock()
    }

    var first: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }
}
