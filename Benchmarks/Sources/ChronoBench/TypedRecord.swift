// The small Codable struct of the typed workloads, as a ChronoStore format and as a GRDB record.

import ChronoStore
import Foundation
import GRDB

/// A small record such as an app keeps: an integer id, a short string, a number and two tags.
struct TypedItem: Codable, Sendable, Identifiable, Equatable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "items"

    var id: Int
    var name: String
    var score: Double
    var tags: [String]

    init(id: Int) {
        self.id = id
        name = "item \(id)"
        score = Double(id) * 0.5
        tags = ["tag\(id % 7)", "tag\(id % 11)"]
    }
}

/// The ChronoStore datastore of ``TypedItem``s (binary coder, no indexes).
enum TypedItemFormat: DatastoreFormat {
    typealias Instance = TypedItem
    static let name = "items"
}

/// An app's dated record, as an event log or a journal keeps one per user action: an integer id,
/// when it happened, a kind and a short note; queried by date.
struct TypedEvent: Codable, Sendable, Identifiable, Equatable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "events"

    var id: Int
    var date: Date
    var kind: String
    var note: String

    /// Event `id` of a run that starts at `start`, one second apart.
    init(id: Int, start: Date) {
        self.id = id
        date = start.addingTimeInterval(Double(id))
        kind = ["opened", "edited", "shared", "closed"][id % 4]
        note = "event \(id) of the app's log"
    }
}

/// The ChronoStore datastore of ``TypedEvent``s, with a non-unique index on the date (the same
/// index the GRDB table has).
enum TypedEventFormat: DatastoreFormat {
    typealias Instance = TypedEvent
    static let name = "events"
    static let date = DatastoreIndex<Self, Date>.oneToMany("date", \.date)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(date)] }
}
