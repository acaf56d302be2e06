// One entry of a history log, and the datastore format all history logs share.
public import ChronoStore
public import Foundation

/// An entry of a ``HistoryLog``: the app's value, when it was appended, and its id.
public struct LoggedEntry<Entry: Codable & Sendable>: Codable, Sendable, Identifiable {
    /// Increases with every append to the log and is never reused, also after deletes and ``HistoryLog/clear()``.
    public var id: Int64
    /// When it was appended (the date passed to ``HistoryLog/append(_:date:)``).
    public var date: Date
    /// The app's value.
    public var entry: Entry
}

extension LoggedEntry: Equatable where Entry: Equatable {}

/// What a history log stores per entry: the entry and the log it belongs to.
struct StoredLogEntry<Entry: Codable & Sendable>: Codable, Sendable {
    var log: String
    var logged: LoggedEntry<Entry>
}

/// Every history log's entries live in one datastore, identified by (log name, entry id), so a
/// log is one contiguous identifier range.
enum HistoryLogFormat<Entry: Codable & Sendable>: DatastoreFormat {
    typealias Instance = StoredLogEntry<Entry>
    typealias Identifier = KeyTuple2<String, Int64>
    static var name: String { "recipes.history-log" }
    static func identifier(of instance: Instance) -> Identifier { KeyTuple2(instance.log, instance.logged.id) }

    /// Every entry of the log `name`, or those with ids up to `last`.
    static func bounds(of name: String, through last: Int64 = .max) -> KeyBounds<Identifier> {
        KeyBounds(from: .including(KeyTuple2(name, .min)), to: .including(KeyTuple2(name, last)))
    }
}
