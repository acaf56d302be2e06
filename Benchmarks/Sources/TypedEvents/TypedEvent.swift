// The dated record of the typed app workloads, shared by chrono-bench (which also stores it through
// GRDB) and chrono-profile's typed mode, so both time the same struct and index.

public import ChronoStore
public import Foundation

/// An app's dated record, as an event log or a journal keeps one per user action: an integer id,
/// when it happened, a kind and a short note; queried by date.
public struct TypedEvent: Codable, Sendable, Identifiable, Equatable {
    public var id: Int
    public var date: Date
    public var kind: String
    public var note: String

    /// Event `id` of a run that starts at `start`, one second apart.
    public init(id: Int, start: Date) {
        self.id = id
        date = start.addingTimeInterval(Double(id))
        kind = ["opened", "edited", "shared", "closed"][id % 4]
        note = "event \(id) of the app's log"
    }
}

/// The ChronoStore datastore of ``TypedEvent``s, with a non-unique index on the date (the same
/// index chrono-bench's GRDB table has).
public enum TypedEventFormat: DatastoreFormat {
    public typealias Instance = TypedEvent
    public static let name = "events"
    public static let date = DatastoreIndex<Self, Date>.oneToMany("date", \.date)
    public static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(date)] }
}
