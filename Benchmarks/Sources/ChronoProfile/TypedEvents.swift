// chrono-profile's typed mode: chrono-bench's app write path (one dated event a durable transaction).

import ChronoStore
import Foundation
import TypedEvents

/// When the first event happened (chrono-bench starts its runs at another date; only the spacing
/// matters to the index).
private let eventsStart = Date(timeIntervalSince1970: 1_800_000_000)

/// A new durable store at `path` (retention last 1 root, as chrono-bench) holding `recordCount`
/// events persisted in one transaction, and its events datastore.
private func durableEventStore(path: String, recordCount: Int, cacheMiB: Int) async throws -> (ChronoStore, Datastore<TypedEventFormat>) {
    let options = ChronoStoreOptions(durability: .durable, retention: .lastRoots(1), cacheByteCount: cacheMiB << 20)
    let store = try await ChronoStore.open(at: URL(fileURLWithPath: path), options: options)
    let events = store.datastore(TypedEventFormat.self)
    try await store.transaction {
        for id in 0..<recordCount { _ = try await events.persist(TypedEvent(id: id, start: eventsStart)) }
    }
    return (store, events)
}

/// Creates the store at `path`, persists `recordCount` events in one transaction, then times
/// `count` durable transactions of one new event each.
func profileTypedEvents(path: String, recordCount: Int, count: Int, cacheMiB: Int) throws {
    try? FileManager.default.removeItem(atPath: path)
    try waitFor {
        let (store, events) = try await durableEventStore(path: path, recordCount: recordCount, cacheMiB: cacheMiB)
        let start = seconds()
        for id in recordCount..<(recordCount + count) {
            try await store.transaction { _ = try await events.persist(TypedEvent(id: id, start: eventsStart)) }
        }
        report("typed", start, count)
        try await store.close()
    }
}

/// As ``profileTypedEvents(path:recordCount:count:cacheMiB:)``, but `tasks` tasks each run `count`
/// durable one-event transactions at once (group commit through the typed API); reports
/// microseconds per transaction over all of them.
func profileTypedGroup(path: String, recordCount: Int, count: Int, tasks: Int, cacheMiB: Int) throws {
    try? FileManager.default.removeItem(atPath: path)
    try waitFor {
        let (store, events) = try await durableEventStore(path: path, recordCount: recordCount, cacheMiB: cacheMiB)
        let start = seconds()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<count {
                        let id = recordCount + task * count + index
                        try await store.transaction { _ = try await events.persist(TypedEvent(id: id, start: eventsStart)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        report("typed-group", start, count * tasks)
        try await store.close()
    }
}

/// Creates the store at `path` with `recordCount` events in one transaction, then times `count`
/// point loads of events by identifier (in a fixed pseudo-random order) in one read transaction:
/// the app read path, which decodes every record it returns.
func profileTypedReads(path: String, recordCount: Int, count: Int, cacheMiB: Int) throws {
    guard recordCount > 0 else { throw ProfileError.noRecords }
    try? FileManager.default.removeItem(atPath: path)
    try waitFor {
        let options = ChronoStoreOptions(durability: .deferred(), retention: .lastRoots(1), cacheByteCount: cacheMiB << 20)
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: path), options: options)
        let events = store.datastore(TypedEventFormat.self)
        try await store.transaction {
            for id in 0..<recordCount { _ = try await events.persist(TypedEvent(id: id, start: eventsStart)) }
        }
        var state: UInt64 = 11
        let ids = (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(recordCount))
        }
        let start = seconds()
        let found = try await store.read {
            var found = 0
            for id in ids where try await events.load(id) != nil { found += 1 }
            return found
        }
        report("typed-reads", start, count)
        guard found == count else { throw ProfileError.missing(count - found) }
        try await store.close()
    }
}

enum ProfileError: Error {
    /// Loads that found no event.
    case missing(Int)
    /// `typed-reads` needs events to load.
    case noRecords
}

/// Runs `body` in a task and blocks this (non-pool) thread until it finishes.
func waitFor(_ body: @escaping @Sendable () async throws -> Void) throws {
    let box = OutcomeBox()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await body() } catch { box.error = error }
        done.signal()
    }
    done.wait()
    if let error = box.error { throw error }
}

/// `@unchecked Sendable`: written by the task before it signals, read after the wait.
final class OutcomeBox: @unchecked Sendable {
    var error: (any Error)?
}
