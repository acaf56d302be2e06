// Keeping indexes in step with records, and knowing which declared indexes are built.
import ChronoStoreEngine

/// What the store records about one datastore: which indexes are built, and of which kind.
/// Stored with the binary coder in the `$datastores` collection under the datastore's name.
struct DatastoreMetadata: Codable, Equatable {
    var indexes: [String: IndexKind] = [:]
}

extension DatastoreMetadata {
    /// Decoded metadata by its stored bytes: every write transaction reads its datastore's
    /// metadata, and decoding it through `Codable` cost more than the rest of preparing the
    /// write (about 20,000 instructions). The bytes decide the value, so a hit is exact.
    private static let cache = DecodedMetadataCache()

    static func decoded(from bytes: [UInt8]) throws -> DatastoreMetadata {
        if let known = cache.value(for: bytes) { return known }
        let metadata = try ChronoBinaryCoder().decode(DatastoreMetadata.self, from: bytes)
        cache.insert(metadata, for: bytes)
        return metadata
    }
}

/// A small process-wide map from stored metadata bytes to their decoded value.
/// `@unchecked Sendable`: `entries` is guarded by `lock`.
private final class DecodedMetadataCache: @unchecked Sendable {
    /// A process holds a few datastores; past this many distinct encodings the map starts over.
    static let capacity = 64
    private let lock = Lock()
    private var entries: [[UInt8]: DatastoreMetadata] = [:]

    func value(for bytes: [UInt8]) -> DatastoreMetadata? { lock.withLock { entries[bytes] } }

    func insert(_ metadata: DatastoreMetadata, for bytes: [UInt8]) {
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[bytes] = metadata
        }
    }
}

/// The encoded values of one index for one record: distinct, usually one (a date, a name).
enum IndexValues {
    /// `values` without repeats, in their first order. Linear for the usual few values.
    static func distinct(_ values: [[UInt8]]) -> [[UInt8]] {
        if values.count <= 1 { return values }
        if values.count <= 8 {
            var kept: [[UInt8]] = []
            kept.reserveCapacity(values.count)
            for value in values where !kept.contains(value) { kept.append(value) }
            return kept
        }
        var seen = Set<[UInt8]>()
        return values.filter { seen.insert($0).inserted }
    }

    /// The values of `values` that `others` lacks.
    static func values(_ values: [[UInt8]], notIn others: [[UInt8]]) -> [[UInt8]] {
        if values.isEmpty || others.isEmpty { return values }
        if others.count <= 8 { return values.filter { !others.contains($0) } }
        let excluded = Set(others)
        return values.filter { !excluded.contains($0) }
    }
}

extension DatastoreFormat {
    static var metadataKey: [UInt8] { Array(name.utf8) }

    static func metadata(in reader: any CollectionReading) throws -> DatastoreMetadata {
        guard let bytes = try reader.value(forKey: metadataKey, in: metadataCollectionName) else { return DatastoreMetadata() }
        return try DatastoreMetadata.decoded(from: bytes)
    }

    static func writeMetadata(_ metadata: DatastoreMetadata, in writer: WriteTransaction) throws {
        try writer.put(metadataKey, ChronoBinaryCoder().encode(metadata), in: metadataCollectionName)
    }

    /// The declared indexes that are built as declared.
    static func builtIndexes(in reader: any CollectionReading) throws -> [AnyDatastoreIndex<Self>] {
        let declared = indexes
        if declared.isEmpty { return [] }
        let metadata = try metadata(in: reader)
        return declared.filter { metadata.indexes[$0.name] == $0.kind }
    }

    /// Before a write: drops built indexes that are no longer declared (they would go stale), and
    /// when the datastore is empty, marks every declared index built (there is nothing to index).
    /// - Returns: the indexes the write must maintain. Cached in `log` for the rest of the
    ///   transaction, so only the first write per datastore reads the metadata.
    static func prepareIndexes(in writer: WriteTransaction, log: inout ChangeLog) throws -> [AnyDatastoreIndex<Self>] {
        // Every persist asks, so the list found built is kept for the transaction (rebuilding and
        // filtering the declared list is about 4 k instructions); the cast cannot fail once the
        // format matches, it only keeps the types honest.
        if let last = log.lastBuiltIndexes, last.format == ObjectIdentifier(Self.self), last.datastore == name,
            let built = last.indexes as? [AnyDatastoreIndex<Self>]
        {
            return built
        }
        let declared = indexes
        if let cached = log.preparedIndexes[name] {
            // A second write to this datastore: keep the list for the writes after it (a
            // transaction of one write never pays for keeping it).
            let built = declared.filter { cached.indexes[$0.name] == $0.kind }
            log.lastBuiltIndexes = (ObjectIdentifier(Self.self), name, built)
            return built
        }
        try validateIndexNames(declared)
        let metadata = try prepareMetadata(declared, in: writer)
        log.preparedIndexes[name] = metadata
        return declared.filter { metadata.indexes[$0.name] == $0.kind }
    }

    private static func prepareMetadata(_ declared: [AnyDatastoreIndex<Self>], in writer: WriteTransaction) throws -> DatastoreMetadata {
        var metadata = try metadata(in: writer)
        if declared.isEmpty && metadata.indexes.isEmpty { return metadata }
        var changed = false
        for (indexName, kind) in metadata.indexes where !declared.contains(where: { $0.name == indexName && $0.kind == kind }) {
            try writer.dropCollection(indexCollectionName(indexName))
            metadata.indexes.removeValue(forKey: indexName)
            changed = true
        }
        if try writer.count(in: collectionName) == 0 {
            for index in declared where metadata.indexes[index.name] == nil {
                try writer.dropCollection(index.collectionName)
                metadata.indexes[index.name] = index.kind
                changed = true
            }
        }
        if changed { try writeMetadata(metadata, in: writer) }
        return metadata
    }

    /// Moves `key`'s index entries from `old`'s values to `new`'s.
    /// - Throws: ``ChronoStoreError/uniqueIndexViolation(datastore:index:existing:conflicting:)``
    ///   when a unique value belongs to another record.
    static func updateIndexes(
        _ built: [AnyDatastoreIndex<Self>], key: [UInt8], old: Instance?, new: Instance?, in writer: WriteTransaction
    ) throws {
        for index in built {
            let oldValues = old.map(index.encodedValues) ?? []
            let newValues = new.map(index.encodedValues) ?? []
            for value in IndexValues.values(oldValues, notIn: newValues) {
                try writer.delete(index.entryKey(value: value, recordKey: key), in: index.collectionName)
            }
            for value in IndexValues.values(newValues, notIn: oldValues) {
                let entry = index.entryKey(value: value, recordKey: key)
                if index.kind == .oneToOne, let existing = try writer.value(forKey: entry, in: index.collectionName),
                    existing != key
                {
                    let holder = try writer.value(forKey: existing, in: collectionName).flatMap { try? decodeRecord($0) }
                    throw ChronoStoreError.uniqueIndexViolation(
                        datastore: name, index: index.name,
                        existing: holder.map { "\(identifier(of: $0))" } ?? describe(key: existing),
                        conflicting: new.map { "\(identifier(of: $0))" } ?? describe(key: key))
                }
                try writer.put(entry, key, in: index.collectionName)
            }
        }
    }
}
