// One committed change to a record, as observers receive it.

/// A committed change to one record of a datastore.
public struct DatastoreChange<Format: DatastoreFormat>: Sendable {
    /// What happened to the record.
    public enum Kind: Sendable, Equatable {
        /// The record did not exist before.
        case created
        /// The record existed before and after, with different contents.
        case updated
        /// The record no longer exists.
        case deleted
    }

    /// What happened.
    public var kind: Kind
    /// The record's identifier.
    public var identifier: Format.Identifier
    /// The record before the change (nil when created).
    public var oldValue: Format.Instance?
    /// The record after the change (nil when deleted).
    public var newValue: Format.Instance?

    /// The change as the format sees it. A side that does not decode counts as absent (one bad
    /// record, say JSON a tool wrote, must not end every observer's stream): a record becoming
    /// undecodable is seen as deleted, one repaired as created; nil when neither side decodes.
    init?(_ change: RawChange) {
        let old = change.old.flatMap { try? Format.decodeRecord($0, key: change.key) }
        let new = change.new.flatMap { try? Format.decodeRecord($0, key: change.key) }
        guard let any = new ?? old else { return nil }
        identifier = Format.identifier(of: any)
        oldValue = old
        newValue = new
        kind = old == nil ? .created : (new == nil ? .deleted : .updated)
    }
}
