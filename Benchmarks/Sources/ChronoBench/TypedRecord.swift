// The small Codable struct of the typed workloads, as a ChronoStore format and as a GRDB record.

import ChronoStore
import Foundation
public import GRDB
public import TypedEvents

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

/// ``TypedEvent`` (target TypedEvents, shared with chrono-profile) as a GRDB record.
extension TypedEvent: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "events"
}
