// What a datastore holds: the instance type, its identifier, its version, its indexes and coder.

/// Describes one kind of record: its type, how it is identified, which version of its encoding
/// is current, how older versions decode, which indexes it has, and how it is encoded.
///
/// ```swift
/// struct Note: Codable, Sendable, Identifiable {
///     var id: Int
///     var title: String
///     var tags: [String]
/// }
///
/// enum NoteFormat: DatastoreFormat {
///     typealias Instance = Note
///     static let name = "notes"
///     static let title = DatastoreIndex<Self, String>.oneToMany("title", \.title)
///     static let tags = DatastoreIndex<Self, String>.manyToMany("tags", \.tags)
///     static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(title), AnyDatastoreIndex(tags)] }
/// }
/// ```
///
/// A store holds one datastore per format, named by ``name``; renaming a format loses access
/// to its records.
public protocol DatastoreFormat: Sendable {
    /// The stored type.
    associatedtype Instance: Codable & Sendable
    /// What identifies an instance; its order is the datastore's order. `Instance.ID` when the
    /// instance is `Identifiable`.
    associatedtype Identifier: OrderedKey & Hashable & Codable

    /// The datastore's name in the store: 1 to 200 bytes of UTF-8, without "/" and not starting
    /// with "$".
    static var name: String { get }

    /// The version new records are written with (default 1). Raise it when the instance's
    /// encoding changes, and teach ``decode(version:from:)`` the old one.
    static var currentVersion: Int { get }

    /// The coder for new records (default ``ValueCoder/binary``).
    static var coder: ValueCoder { get }

    /// The indexes to maintain (default none). Adding or changing one takes effect after
    /// ``Datastore/warm(migrate:progress:)`` builds it.
    static var indexes: [AnyDatastoreIndex<Self>] { get }

    /// A cap on the records kept (default none): the newest so many, and/or those younger than
    /// an age. Enforced in the transaction of every ``Datastore/persist(_:)``. Distinct from
    /// history retention, which keeps old *versions* of the whole store: see ``RecordRetention``.
    static var recordRetention: RecordRetention<Self>? { get }

    /// The identifier of `instance`.
    static func identifier(of instance: Instance) -> Identifier

    /// Decodes a record written with an older (or newer) `version`: a lazy migration, run on
    /// every read of such a record until ``Datastore/warm(migrate:progress:)`` rewrites it. The default
    /// throws ``ChronoStoreError/unsupportedRecordVersion(datastore:version:current:)``.
    static func decode(version: Int, from record: StoredRecord) throws -> Instance
}

extension DatastoreFormat {
    /// Version 1.
    public static var currentVersion: Int { 1 }
    /// The binary coder.
    public static var coder: ValueCoder { .binary }
    /// No cap on records.
    public static var recordRetention: RecordRetention<Self>? { nil }
    /// No indexes.
    public static var indexes: [AnyDatastoreIndex<Self>] { [] }

    /// Refuses versions other than the current one.
    public static func decode(version: Int, from record: StoredRecord) throws -> Instance {
        throw ChronoStoreError.unsupportedRecordVersion(datastore: name, version: version, current: currentVersion)
    }
}

extension DatastoreFormat where Instance: Identifiable, Instance.ID == Identifier {
    /// `instance.id`.
    public static func identifier(of instance: Instance) -> Identifier { instance.id }
}

/// A stored record of an older version, handed to ``DatastoreFormat/decode(version:from:)``.
public struct StoredRecord: Sendable {
    /// The version the record was written with.
    public let version: Int
    /// The coder that wrote it.
    public let coder: ValueCoder
    /// The encoded value, without the envelope.
    public let payload: [UInt8]

    /// Decodes the payload as `type` (typically the old version of your instance type).
    public func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try coder.decode(type, from: payload)
    }

    /// The payload as JSON text, for migrations that reshape data by hand.
    public func jsonDescription() throws -> String {
        try RecordEnvelope.jsonDescription(of: RecordEnvelope.wrap(payload, coder: coder, version: version))
    }
}
