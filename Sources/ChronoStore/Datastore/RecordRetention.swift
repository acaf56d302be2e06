// Record retention: a datastore capped to its newest records by count and/or age.
public import Foundation
import ChronoStoreEngine

/// Which records a datastore keeps: the newest `count` (by identifier or by an index), and/or
/// those whose `Date` index value is younger than an age. Declare it on the format:
///
/// ```swift
/// enum QuoteFormat: DatastoreFormat {
///     ...
///     static let date = DatastoreIndex<Self, Date>.oneToMany("date", \.date)
///     static var recordRetention: RecordRetention<Self>? {
///         RecordRetention.newest(500, by: date).youngerThan(90 * 86_400, by: date)
///     }
/// }
/// ```
///
/// Every ``Datastore/persist(_:)`` enforces it in its own transaction: records past the cap are
/// deleted, with their index entries, in the same commit as the write that exceeded it. Deleted
/// records remain in the store's history (undo brings them back) until history retention drops
/// those roots.
///
/// This is not history retention (``HistoryRetention``): that decides how many old *versions of
/// the whole store* are kept for undo and as-of reads; record retention decides how many
/// *records* a datastore holds now.
///
/// Cost per persist: O(log n) to check; O(k log n) to delete k records past the cap.
public struct RecordRetention<Format: DatastoreFormat>: Sendable {
    /// The record keys to delete, given a write transaction and the current time.
    private var rules: [@Sendable (any CollectionReading, Date) throws -> [[UInt8]]] = []

    private init() {}

    /// Keeps the `count` records with the largest identifiers.
    public static func newest(_ count: Int) -> RecordRetention {
        RecordRetention().newest(count)
    }

    /// Keeps the `count` records with the largest `index` values (ties: largest identifiers).
    /// The index must be one-to-one or one-to-many (one value per record).
    public static func newest<Value>(_ count: Int, by index: DatastoreIndex<Format, Value>) -> RecordRetention {
        RecordRetention().newest(count, by: index)
    }

    /// Keeps the records whose `index` date is at most `age` seconds before the write.
    public static func youngerThan(_ age: TimeInterval, by index: DatastoreIndex<Format, Date>) -> RecordRetention {
        RecordRetention().youngerThan(age, by: index)
    }

    /// Also keeps at most `count` records, the ones with the largest identifiers.
    public func newest(_ count: Int) -> RecordRetention {
        adding { reader, _ in
            let excess = try reader.count(in: Format.collectionName) - Swift.max(count, 0)
            return try Self.firstKeys(excess, in: Format.collectionName, range: KeyRange(), values: false, reader)
        }
    }

    /// Also keeps at most `count` records, the ones with the largest `index` values.
    public func newest<Value>(_ count: Int, by index: DatastoreIndex<Format, Value>) -> RecordRetention {
        let erased = AnyDatastoreIndex(index)
        return adding { reader, _ in
            guard erased.kind != .manyToMany else {
                throw ChronoStoreError.invalidOptions("record retention by \(Format.name)/\(erased.name) needs one value per record")
            }
            let excess = try reader.count(in: Format.collectionName) - Swift.max(count, 0)
            guard excess > 0 else { return [] }
            try Self.requireBuilt(erased, reader)
            return try Self.firstKeys(excess, in: erased.collectionName, range: KeyRange(), values: true, reader)
        }
    }

    /// Also drops records whose `index` date is more than `age` seconds before the write.
    public func youngerThan(_ age: TimeInterval, by index: DatastoreIndex<Format, Date>) -> RecordRetention {
        let erased = AnyDatastoreIndex(index)
        let suffixed = index.kind != .oneToOne
        return adding { reader, now in
            guard try reader.count(in: Format.collectionName) > 0 else { return [] }
            try Self.requireBuilt(erased, reader)
            let range = KeyBounds<Date>(to: .excluding(now.addingTimeInterval(-age))).keyRange(suffixed: suffixed)
            return try Self.firstKeys(Int.max, in: erased.collectionName, range: range, values: true, reader)
        }
    }

    private func adding(_ rule: @escaping @Sendable (any CollectionReading, Date) throws -> [[UInt8]]) -> RecordRetention {
        var copy = self
        copy.rules.append(rule)
        return copy
    }

    /// The keys of the records past the cap, each once.
    func keysToDrop(in reader: any CollectionReading, now: Date) throws -> [[UInt8]] {
        var seen = Set<[UInt8]>()
        return try rules.flatMap { try $0(reader, now) }.filter { seen.insert($0).inserted }
    }

    /// The first `count` keys in `range` (or, with `values`, the record keys the entries name).
    private static func firstKeys(
        _ count: Int, in collection: String, range: KeyRange, values: Bool, _ reader: any CollectionReading
    ) throws -> [[UInt8]] {
        guard count > 0 else { return [] }
        var keys: [[UInt8]] = []
        try reader.scan(collection, range: range, reverse: false) { key, value in
            keys.append(values ? value : key)
            return keys.count < count
        }
        return keys
    }

    private static func requireBuilt(_ index: AnyDatastoreIndex<Format>, _ reader: any CollectionReading) throws {
        guard try Format.builtIndexes(in: reader).contains(where: { $0.name == index.name }) else {
            throw ChronoStoreError.indexNotBuilt(datastore: Format.name, index: index.name)
        }
    }
}

extension DatastoreFormat {
    /// Deletes the records past ``recordRetention`` (if any) in `writer`. Returns how many.
    static func enforceRetention(in writer: WriteTransaction, log: inout ChangeLog) throws -> Int {
        guard let retention = recordRetention else { return 0 }
        return try deleteRecords(retention.keysToDrop(in: writer, now: Date()), in: writer, log: &log)
    }
}
