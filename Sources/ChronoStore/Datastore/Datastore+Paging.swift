// Ends, counts and deletes over ranges: first and last records, range counts, range and bulk deletes.
import ChronoStoreEngine

extension Datastore {
    /// The record with the smallest identifier, or nil when the datastore is empty. O(log n).
    public func first() async throws -> Format.Instance? {
        var iterator = loadAll(limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }

    /// The record with the largest identifier, or nil. O(log n).
    public func last() async throws -> Format.Instance? {
        var iterator = loadAll(order: .descending, limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }

    /// The record with the smallest `index` value (ties: smallest identifier), or nil. O(log n).
    /// - Throws: ``ChronoStoreError/indexNotBuilt(datastore:index:)``.
    public func first<Value>(by index: DatastoreIndex<Format, Value>) async throws -> Format.Instance? {
        var iterator = load(index, in: .all, limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }

    /// The record with the largest `index` value (ties: largest identifier), or nil: with a
    /// `Date` index, the newest record. O(log n).
    /// - Throws: ``ChronoStoreError/indexNotBuilt(datastore:index:)``.
    public func last<Value>(by index: DatastoreIndex<Format, Value>) async throws -> Format.Instance? {
        var iterator = load(index, in: .all, order: .descending, limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }

    /// How many records have identifiers in `bounds`. Cost: O(log n + k) for k matches (the
    /// entries are counted, not decoded); ``count()`` is O(1) for the whole datastore.
    public func count(in bounds: KeyBounds<Format.Identifier>) async throws -> Int {
        let range = bounds.keyRange(suffixed: false)
        return try store.performRead { reader in try Self.countEntries(in: Format.collectionName, range: range, reader) }
    }

    /// How many entries of `index` have values in `bounds`: the records matching, except that a
    /// many-to-many index counts a record once per matching value. Cost: O(log n + k).
    /// - Throws: ``ChronoStoreError/indexNotBuilt(datastore:index:)``.
    public func count<Value>(_ index: DatastoreIndex<Format, Value>, in bounds: KeyBounds<Value>) async throws -> Int {
        let erased = AnyDatastoreIndex(index)
        let range = bounds.keyRange(suffixed: index.kind != .oneToOne)
        return try store.performRead { reader in
            try Self.requireBuilt(erased, in: reader)
            return try Self.countEntries(in: erased.collectionName, range: range, reader)
        }
    }

    /// Deletes every record whose identifier lies in `bounds`, and their index entries, in one
    /// transaction (or the current one). Cost: O(k log n) for k records.
    /// - Returns: how many records were deleted (with none, nothing is committed).
    @discardableResult
    public func delete(in bounds: KeyBounds<Format.Identifier>) async throws -> Int {
        try Format.validateName()
        let range = bounds.keyRange(suffixed: false)
        return try await store.performWrite { writer, log in
            let keys = try Self.keys(in: Format.collectionName, range: range, recordKeys: false, writer)
            return try Format.deleteRecords(keys, in: writer, log: &log)
        }
    }

    /// Deletes every record whose `index` value lies in `bounds`, and their index entries, in one
    /// transaction (or the current one). Cost: O(k log n) for k records.
    /// - Returns: how many records were deleted.
    /// - Throws: ``ChronoStoreError/indexNotBuilt(datastore:index:)``.
    @discardableResult
    public func delete<Value>(_ index: DatastoreIndex<Format, Value>, in bounds: KeyBounds<Value>) async throws -> Int {
        try Format.validateName()
        let erased = AnyDatastoreIndex(index)
        let range = bounds.keyRange(suffixed: index.kind != .oneToOne)
        return try await store.performWrite { writer, log in
            try Self.requireBuilt(erased, in: writer)
            let keys = try Self.keys(in: erased.collectionName, range: range, recordKeys: true, writer)
            return try Format.deleteRecords(keys, in: writer, log: &log)
        }
    }

    /// Deletes every record of the datastore and their index entries, in one transaction. The
    /// indexes stay declared and built. Older roots keep the records (undo brings them back).
    /// - Returns: how many records were deleted.
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await delete(in: .all)
    }

    // MARK: - Helpers

    private static func countEntries(in collection: String, range: KeyRange, _ reader: any CollectionReading) throws -> Int {
        var count = 0
        try reader.scan(collection, range: range, reverse: false) { _, _ in
            count += 1
            return true
        }
        return count
    }

    /// The keys in `range` of `collection`, or (`recordKeys`, for an index) the record keys its
    /// entries name, each once, in scan order.
    private static func keys(
        in collection: String, range: KeyRange, recordKeys: Bool, _ reader: any CollectionReading
    ) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        var seen = Set<[UInt8]>()
        try reader.scan(collection, range: range, reverse: false) { key, value in
            let recordKey = recordKeys ? value : key
            if seen.insert(recordKey).inserted { keys.append(recordKey) }
            return true
        }
        return keys
    }

    private static func requireBuilt(_ index: AnyDatastoreIndex<Format>, in reader: any CollectionReading) throws {
        guard try reader.count(in: Format.collectionName) == 0
            || Format.builtIndexes(in: reader).contains(where: { $0.name == index.name })
        else { throw ChronoStoreError.indexNotBuilt(datastore: Format.name, index: index.name) }
    }
}

extension DatastoreFormat {
    /// Deletes the records with `keys` (those present) and their index entries, logging each.
    /// - Returns: how many were deleted.
    static func deleteRecords(_ keys: [[UInt8]], in writer: WriteTransaction, log: inout ChangeLog) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        let built = try prepareIndexes(in: writer, log: &log)
        var deleted = 0
        for key in keys {
            guard let oldRecord = try writer.value(forKey: key, in: collectionName) else { continue }
            let old = built.isEmpty ? nil : try decodeReplaced(oldRecord, key: key, built: built, in: writer)
            try updateIndexes(built, key: key, old: old, new: nil, in: writer)
            try writer.delete(key, in: collectionName)
            log.record(collection: collectionName, key: key, old: oldRecord, new: nil)
            deleted += 1
        }
        return deleted
    }
}
