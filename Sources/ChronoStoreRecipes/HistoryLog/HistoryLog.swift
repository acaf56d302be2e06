// A history log (a calculator's tape, recent searches): appends that never block, newest-first pages, retention.
public import ChronoStore
public import Foundation

/// An append-only list of the app's entries, newest first, kept across launches.
///
/// ``append(_:date:)`` returns at once: entries are committed in the background, durably (with
/// the store's `Durability`) and in the order they were appended. Reads (``page(before:limit:)``)
/// see what has been committed; ``flush()`` waits for everything appended so far. The log keeps
/// at most ``Retention/maximumCount`` entries and none older than ``Retention/maximumAge``,
/// enforced in the transaction of each append. Several logs (of any entry types) can share a
/// store: each is named, and lives in the datastore `recipes.history-log` under its name.
///
/// ```swift
/// let tape = HistoryLog<String>(store: store, name: "tape", retention: .init(maximumCount: 500))
/// tape.append("2 + 2 = 4")                       // from the main actor: returns at once
/// let newest = try await tape.page(limit: 20)    // after a flush or a moment later
/// ```
public final class HistoryLog<Entry: Codable & Sendable>: Sendable {
    /// How many entries a log keeps.
    public struct Retention: Sendable, Equatable {
        /// Keep at most this many (the newest); nil for no limit.
        public var maximumCount: Int?
        /// Keep none appended longer than this ago; nil for no limit.
        public var maximumAge: TimeInterval?

        /// A retention by count and/or age.
        public init(maximumCount: Int? = nil, maximumAge: TimeInterval? = nil) {
            self.maximumCount = maximumCount
            self.maximumAge = maximumAge
        }
    }

    /// The store holding the log.
    public let store: ChronoStore
    /// The log's name in the store.
    public let name: String
    /// What the log keeps.
    public let retention: Retention
    let datastore: Datastore<HistoryLogFormat<Entry>>
    private let writer: BackgroundWriter

    /// A log named `name` in `store`. Opening is free: nothing is read or written until used.
    public init(store: ChronoStore, name: String, retention: Retention = Retention()) {
        self.store = store
        self.name = name
        self.retention = retention
        self.datastore = store.datastore(HistoryLogFormat<Entry>.self)
        self.writer = BackgroundWriter()
    }

    /// Appends `entry` in the background and returns at once (it never waits, not even for
    /// another process's writer). Entries commit in append order, each in its own transaction
    /// labelled with the log's name. A failure is reported by the next ``flush()``.
    public func append(_ entry: Entry, date: Date = Date()) {
        writer.enqueue { [self] in try await self.commit(entry, date: date) }
    }

    /// Waits until every entry appended before this call is committed.
    /// - Throws: the first error an append met since the last flush.
    public func flush() async throws { try await writer.flush() }

    /// A page of entries, newest first: the newest `limit` entries, or those with ids below
    /// `before` (pass the last id of the previous page). O(log n + limit).
    public func page(before: Int64? = nil, limit: Int = 50) async throws -> [LoggedEntry<Entry>] {
        let bounds = HistoryLogFormat<Entry>.bounds(of: name, through: (before ?? .max) - (before == nil ? 0 : 1))
        return try await datastore.load(bounds, order: .descending, limit: limit).collect().map(\.logged)
    }

    /// Every entry with an id of at least `oldest`, newest first. O(log n + result).
    public func entries(from oldest: Int64) async throws -> [LoggedEntry<Entry>] {
        let bounds = KeyBounds<KeyTuple2<String, Int64>>(from: .including(KeyTuple2(name, oldest)), to: .including(KeyTuple2(name, .max)))
        return try await datastore.load(bounds, order: .descending).collect().map(\.logged)
    }

    /// How many entries the log holds. O(log n + count).
    public func count() async throws -> Int { try await datastore.count(in: HistoryLogFormat<Entry>.bounds(of: name)) }

    /// Deletes the entries with these ids, in one transaction (after pending appends commit).
    public func delete(_ ids: some Collection<Int64> & Sendable) async throws {
        try await flush()
        try await store.transaction(label: "Delete from \(name)") {
            for id in ids { try await datastore.deleteIfPresent(KeyTuple2(name, id)) }
        }
    }

    /// Deletes every entry, in one transaction (after pending appends commit). Ids are not
    /// reused afterwards. The entries stay in the store's history until its retention drops
    /// them; call `ChronoStore.clearHistory()` as well to forget them at once.
    public func clear() async throws {
        try await flush()
        try await datastore.delete(in: HistoryLogFormat<Entry>.bounds(of: name))
    }

    /// Commits one entry and applies the retention, in one transaction.
    private func commit(_ entry: Entry, date: Date) async throws {
        let counterKey = "recipes.history-log/\(name)/next-id"
        try await store.transaction(label: name) {
            let id = try await store.value(Int64.self, forKey: counterKey) ?? 1
            try await store.setValue(id + 1, forKey: counterKey)
            try await datastore.persist(StoredLogEntry(log: name, logged: LoggedEntry(id: id, date: date, entry: entry)))
            try await applyRetention(now: date)
        }
    }

    private func applyRetention(now: Date) async throws {
        let all = HistoryLogFormat<Entry>.bounds(of: name)
        if let maximumCount = retention.maximumCount {
            let excess = try await datastore.count(in: all) - max(maximumCount, 0)
            if excess > 0, let last = try await datastore.load(all, limit: excess).collect().last {
                try await datastore.delete(in: HistoryLogFormat<Entry>.bounds(of: name, through: last.logged.id))
            }
        }
        if let maximumAge = retention.maximumAge {
            let cutoff = now.addingTimeInterval(-maximumAge)
            var lastExpired: Int64?
            for try await stored in datastore.load(all) {
                guard stored.logged.date < cutoff else { break }
                lastExpired = stored.logged.id
            }
            if let lastExpired { try await datastore.delete(in: HistoryLogFormat<Entry>.bounds(of: name, through: lastExpired)) }
        }
    }
}
