// A typed datastore: persist, load, delete and count the records of one format.
import ChronoStoreEngine

/// The records of one ``DatastoreFormat`` inside a ``ChronoStore``.
///
/// A cheap value (it holds only the store); get one with ``ChronoStore/datastore(_:)``.
/// Every operation joins the current transaction (``ChronoStore/transaction(label:isolation:_:)``
/// or ``ChronoStore/read(at:isolation:_:)``) if the task is in one, else it runs in its own:
/// a write commits at once (durably, with ``Durability/durable``), a read sees the newest head.
///
/// Costs are in the number of records n: loads and persists are O(log n) page reads plus the
/// decoding; ``count()`` is O(1).
public struct Datastore<Format: DatastoreFormat>: Sendable {
    /// The store holding this datastore.
    public let store: ChronoStore

    init(store: ChronoStore) { self.store = store }

    /// Inserts `instance`, or replaces the record with the same identifier, and updates every
    /// built index in the same transaction. With a ``DatastoreFormat/recordRetention``, records
    /// past the cap (possibly this one) are deleted in the same transaction.
    ///
    /// Index entries are computed from the stored record as ``load(_:)`` decodes it, so they match
    /// what loads return even for a value its coder does not keep exactly (for example a `NaN`
    /// through ``ValueCoder/json``). In a datastore with indexes this costs one extra decode.
    /// A stored record that does not decode is replaced too (this is how to repair it): its index
    /// entries are found by scanning the indexes, and nil is returned.
    /// - Returns: the replaced instance, or nil when this inserted a new record (or replaced one
    ///   that did not decode).
    /// - Throws: ``ChronoStoreError/uniqueIndexViolation(datastore:index:existing:conflicting:)``
    ///   (nothing is written), ``ChronoStoreError/keyTooLarge(byteCount:limit:)``,
    ///   ``ChronoStoreError/encodingFailed(datastore:reason:)``.
    @discardableResult
    public func persist(_ instance: Format.Instance) async throws -> Format.Instance? {
        try Format.validateName()
        let key = Format.key(Format.identifier(of: instance))
        let record = try Format.encodeRecord(instance)
        return try await store.performWrite { writer, log in
            let built = try Format.prepareIndexes(in: writer, log: &log)
            try Format.recordIdentifierShape(in: writer, log: &log)
            let oldRecord = try writer.value(forKey: key, in: Format.collectionName)
            let old = try oldRecord.flatMap { try Format.decodeReplaced($0, key: key, built: built, in: writer) }
            // Index what a later load returns, not the instance in hand: an update or delete
            // recomputes the old entries from the decoded record, so an instance that does not
            // survive its coder exactly could otherwise leave an entry no one removes.
            let indexed = built.isEmpty ? instance : try Format.decodeRecord(record)
            try Format.updateIndexes(built, key: key, old: old, new: indexed, in: writer)
            try writer.put(key, record, in: Format.collectionName)
            log.record(collection: Format.collectionName, key: key, old: oldRecord, new: record)
            _ = try Format.enforceRetention(in: writer, log: &log)
            return old
        }
    }

    /// Persists every instance in one transaction (or in the current one): all or none.
    /// - Returns: how many records existed before and were replaced.
    @discardableResult
    public func persist(contentsOf instances: some Sequence<Format.Instance> & Sendable) async throws -> Int {
        try await store.transaction {
            var replaced = 0
            for instance in instances where try await persist(instance) != nil { replaced += 1 }
            return replaced
        }
    }

    /// The instance with `identifier`, or nil. Records of older versions are migrated on the fly.
    /// - Throws: ``ChronoStoreError/undecodableRecord(datastore:identifier:reason:)`` when this
    ///   record's bytes do not decode (other records are unaffected),
    ///   ``ChronoStoreError/unsupportedRecordVersion(datastore:version:current:)``.
    public func load(_ identifier: Format.Identifier) async throws -> Format.Instance? {
        let key = Format.key(identifier)
        return try store.performRead { reader in
            try reader.value(forKey: key, in: Format.collectionName).map { try Format.decodeRecord($0, key: key) }
        }
    }

    /// Deletes the record with `identifier` and its index entries.
    /// - Returns: the deleted instance.
    /// - Throws: ``ChronoStoreError/recordNotFound(datastore:identifier:)`` when there is none.
    /// A record that does not decode is deleted with its index entries (found by scanning the
    /// indexes), and this throws ``ChronoStoreError/undecodableRecord(datastore:identifier:reason:)``
    /// after the deletion commits, since there is no instance to return.
    @discardableResult
    public func delete(_ identifier: Format.Identifier) async throws -> Format.Instance {
        switch try await deleteRecord(identifier) {
        case .deleted(let old): return old
        case .none: throw ChronoStoreError.recordNotFound(datastore: Format.name, identifier: "\(identifier)")
        case .undecodable(let error): throw error
        }
    }

    /// Deletes the record with `identifier` if there is one. A record that does not decode is
    /// deleted too, with its index entries (found by scanning the indexes), and nil is returned.
    /// - Returns: the deleted instance, or nil when there was none (then nothing is committed) or
    ///   it did not decode.
    @discardableResult
    public func deleteIfPresent(_ identifier: Format.Identifier) async throws -> Format.Instance? {
        if case .deleted(let old) = try await deleteRecord(identifier) { return old }
        return nil
    }

    private enum Deletion {
        case none
        case deleted(Format.Instance)
        case undecodable(ChronoStoreError)
    }

    private func deleteRecord(_ identifier: Format.Identifier) async throws -> Deletion {
        let key = Format.key(identifier)
        return try await store.performWrite { writer, log in
            guard let oldRecord = try writer.value(forKey: key, in: Format.collectionName) else { return .none }
            let built = try Format.prepareIndexes(in: writer, log: &log)
            let old = try Format.decodeReplaced(oldRecord, key: key, built: built, in: writer)
            try Format.updateIndexes(built, key: key, old: old, new: nil, in: writer)
            try writer.delete(key, in: Format.collectionName)
            log.record(collection: Format.collectionName, key: key, old: oldRecord, new: nil)
            guard let old else {
                return .undecodable(.undecodableRecord(datastore: Format.name, identifier: Format.describe(key: key), reason: "deleted"))
            }
            return .deleted(old)
        }
    }

    /// How many records the datastore holds. O(1).
    public func count() async throws -> Int {
        try store.performRead { reader in try reader.count(in: Format.collectionName) }
    }
}
