// Single values (settings, app state): one Codable value per key, with history, observation and undo.
import ChronoStoreEngine

extension ChronoStore {
    /// The engine collection holding single values, keyed by the key's ordered (string) encoding.
    static let valuesCollectionName = "$values"

    /// The value stored under `key`, or nil.
    ///
    /// Single values are for what is one thing, not a collection: settings, an app's state, a
    /// cursor. They live in the store beside the datastores, so they share everything a record
    /// has: a write commits a root (undo, redo, as-of reads, snapshots and backups include it),
    /// and inside ``transaction(label:isolation:_:)`` or ``read(at:isolation:_:)`` this joins the
    /// transaction (so `read(at: .snapshot("before")) { try await store.value(…) }` reads the
    /// past). Cost: O(log values) plus decoding.
    /// - Throws: ``ChronoStoreError/undecodableRecord(datastore:identifier:reason:)`` (datastore
    ///   `$values`) when the stored value does not decode as `Value`.
    public func value<Value: Codable & Sendable>(_ type: Value.Type, forKey key: String) async throws -> Value? {
        let stored = try performRead { reader in try reader.value(forKey: key.orderedKeyBytes, in: Self.valuesCollectionName) }
        return try stored.map { try Self.decodeValue(type, from: $0, key: key) }
    }

    /// Stores `value` under `key`, replacing what was there, in one commit (or in the current
    /// transaction). Observers of the key (``valueChanges(_:forKey:)``) hear of it after the commit;
    /// ``undo(steps:)`` takes it back. Writing the value that is already stored commits nothing.
    /// - Parameters:
    ///   - value: the value; any `Codable` type, encoded with ``ValueCoder/binary``.
    ///   - key: any string; keys are independent of datastores' names.
    ///   - label: the commit's action name (for an Undo menu); ignored inside a transaction.
    /// - Throws: ``ChronoStoreError/encodingFailed(datastore:reason:)``, ``ChronoStoreError/keyTooLarge(byteCount:limit:)``.
    public func setValue<Value: Codable & Sendable>(_ value: Value, forKey key: String, label: String? = nil) async throws {
        let record: [UInt8]
        do {
            record = RecordEnvelope.wrap(try ValueCoder.binary.encode(value), coder: .binary, version: 1)
        } catch {
            throw ChronoStoreError.encodingFailed(datastore: Self.valuesCollectionName, reason: "\(error)")
        }
        try await writeValue(record, forKey: key, label: label)
    }

    /// Removes the value under `key` (see ``setValue(_:forKey:label:)``).
    /// - Returns: whether there was one (when not, nothing is committed).
    @discardableResult
    public func removeValue(forKey key: String, label: String? = nil) async throws -> Bool {
        try await writeValue(nil, forKey: key, label: label)
    }

    /// The values stored under `key` from now on, in commit order: each commit that changes it
    /// (this process's writes, undo, redo, restores, other processes' commits) yields the new
    /// value, or nil when it was removed. The stream ends when the store closes, and throws if a
    /// stored value does not decode as `Value`. Delivery is as for ``Datastore/changes()``.
    public func valueChanges<Value: Codable & Sendable>(
        _ type: Value.Type, forKey key: String
    ) -> AsyncThrowingStream<Value?, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Value?, any Error>.makeStream()
        let encodedKey = key.orderedKeyBytes
        let token = hub.add(
            collection: Self.valuesCollectionName,
            handler: { raw in
                guard raw.key == encodedKey else { return }
                do {
                    continuation.yield(try raw.new.map { try Self.decodeValue(type, from: $0, key: key) })
                } catch {
                    continuation.finish(throwing: error)
                }
            },
            finish: { continuation.finish() })
        guard let token else {
            continuation.finish()
            return stream
        }
        let hub = self.hub
        continuation.onTermination = { _ in hub.remove(token) }
        return stream
    }

    @discardableResult
    private func writeValue(_ record: [UInt8]?, forKey key: String, label: String?) async throws -> Bool {
        let encodedKey = key.orderedKeyBytes
        return try await performWrite(label: label) { writer, log in
            let old = try writer.value(forKey: encodedKey, in: Self.valuesCollectionName)
            guard old != record else { return old != nil }
            if !log.describedDatastores.contains(Self.valuesCollectionName) {
                // Recorded like a datastore's identifier shape, so `chrono list` shows the keys.
                let name = Array(Self.valuesCollectionName.utf8), shape = Array(KeyShape.string.text.utf8)
                if try writer.value(forKey: name, in: "$identifiers") != shape { try writer.put(name, shape, in: "$identifiers") }
                log.describedDatastores.insert(Self.valuesCollectionName)
            }
            if let record {
                try writer.put(encodedKey, record, in: Self.valuesCollectionName)
            } else {
                guard try writer.delete(encodedKey, in: Self.valuesCollectionName) else { return false }
            }
            log.record(collection: Self.valuesCollectionName, key: encodedKey, old: old, new: record)
            return old != nil
        }
    }

    private static func decodeValue<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8], key: String) throws -> Value {
        do {
            let (coder, _, payload) = try RecordEnvelope.unwrap(bytes)
            return try coder.decode(type, from: payload)
        } catch {
            throw ChronoStoreError.undecodableRecord(
                datastore: valuesCollectionName, identifier: KeyValue.string(key).jsonText, reason: "\(error)")
        }
    }
}
