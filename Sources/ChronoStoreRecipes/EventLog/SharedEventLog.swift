// A log an app and its extensions share through one store file: record anywhere, follow from anywhere.
public import ChronoStore
public import Foundation

/// Events recorded by several processes (an app, its widget, its share extension) into one
/// store, read and followed by any of them.
///
/// Each process opens the store (in the app group's container) with `ChronoStore.open(at:options:createIfMissing:readOnly:)`
/// and makes a log of the same name. ``record(_:source:date:)`` commits at once (an extension may
/// be suspended right after); ``changes()`` delivers the events other processes record, about
/// 100 ms after their commit. The log keeps the newest ``Retention/maximumCount`` events and none
/// older than ``Retention/maximumAge`` (500 and 90 days by default), enforced as each event is
/// recorded.
public final class SharedEventLog<Payload: Codable & Sendable>: Sendable {
    /// How many events the log keeps.
    public struct Retention: Sendable, Equatable {
        /// Keep the newest this many.
        public var maximumCount: Int
        /// Keep none dated longer than this before the newest recorded one.
        public var maximumAge: TimeInterval

        /// The last `maximumCount` events within `maximumAge`.
        public init(maximumCount: Int = 500, maximumAge: TimeInterval = 90 * 86_400) {
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
    let datastore: Datastore<SharedEventFormat<Payload>>

    /// A log named `name` in `store`.
    public init(store: ChronoStore, name: String, retention: Retention = Retention()) {
        self.store = store
        self.name = name
        self.retention = retention
        self.datastore = store.datastore(SharedEventFormat<Payload>.self)
    }

    /// Records an event and applies the retention, in one durable commit.
    @discardableResult
    public func record(_ payload: Payload, source: String, date: Date = Date()) async throws -> SharedEvent<Payload> {
        let event = SharedEvent(date: date, source: source, payload: payload)
        try await store.transaction(label: "\(name): \(source)") {
            try await datastore.persist(StoredEvent(log: name, event: event))
            try await applyRetention(now: date)
        }
        return event
    }

    /// The newest `limit` events (every event by default), newest first.
    public func events(limit: Int? = nil) async throws -> [SharedEvent<Payload>] {
        try await datastore.load(SharedEventFormat<Payload>.bounds(of: name), order: .descending, limit: limit).collect().map(\.event)
    }

    /// Events recorded from now on, by this process or any other, in commit order.
    public func changes() -> AsyncThrowingStream<SharedEvent<Payload>, any Error> {
        let name = self.name
        let source = datastore.changes()
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await change in source where change.kind == .created && change.identifier.first == name {
                        if let event = change.newValue?.event { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Deletes every event, in one commit.
    public func clear() async throws {
        try await datastore.delete(in: SharedEventFormat<Payload>.bounds(of: name))
    }

    private func applyRetention(now: Date) async throws {
        let all = SharedEventFormat<Payload>.bounds(of: name)
        let expired = now.addingTimeInterval(-retention.maximumAge)
        try await datastore.delete(in: SharedEventFormat<Payload>.bounds(of: name, through: expired.addingTimeInterval(-0.001)))
        let excess = try await datastore.count(in: all) - max(retention.maximumCount, 0)
        if excess > 0, let last = try await datastore.load(all, limit: excess).collect().last {
            let bound = KeyTuple3(name, last.event.date, last.event.id)
            try await datastore.delete(in: KeyBounds(from: all.lower, to: .including(bound)))
        }
    }
}
