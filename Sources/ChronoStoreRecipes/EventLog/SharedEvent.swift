// One event of a shared event log, and the datastore format all event logs share.
public import ChronoStore
public import Foundation

/// An event recorded by ``SharedEventLog/record(_:source:date:)``, in whichever process.
public struct SharedEvent<Payload: Codable & Sendable>: Codable, Sendable, Identifiable {
    /// Unique across processes and devices.
    public var id: UUID
    /// When it happened; events are ordered by it (ties by `id`).
    public var date: Date
    /// Who recorded it: "app", "widget", "share-extension", ...
    public var source: String
    /// The app's value.
    public var payload: Payload

    /// An event with these fields.
    public init(id: UUID = UUID(), date: Date, source: String, payload: Payload) {
        self.id = id
        self.date = date
        self.source = source
        self.payload = payload
    }
}

extension SharedEvent: Equatable where Payload: Equatable {}

/// What the datastore holds per event: the event and its log's name.
struct StoredEvent<Payload: Codable & Sendable>: Codable, Sendable {
    var log: String
    var event: SharedEvent<Payload>
}

/// All event logs share one datastore, identified by (log name, date, id): a log is one
/// identifier range, in time order.
enum SharedEventFormat<Payload: Codable & Sendable>: DatastoreFormat {
    typealias Instance = StoredEvent<Payload>
    typealias Identifier = KeyTuple3<String, Date, UUID>
    static var name: String { "recipes.event-log" }
    static func identifier(of instance: Instance) -> Identifier {
        KeyTuple3(instance.log, instance.event.date, instance.event.id)
    }

    static var lowestID: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    static var highestID: UUID { UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)) }

    /// The events of log `name` dated up to `last` (every event by default).
    static func bounds(of name: String, through last: Date = .distantFuture) -> KeyBounds<Identifier> {
        KeyBounds(from: .including(KeyTuple3(name, .distantPast, lowestID)), to: .including(KeyTuple3(name, last, highestID)))
    }
}
