// What tools need to know about a collection the typed layer wrote: is it a datastore, how are its keys shaped.
package import ChronoStoreEngine

/// A collection as the typed layer sees it, for tools (`chrono`) that work on engine collections.
package enum TypedCollection: Equatable {
    /// Not a datastore: keys and values are whatever a tool wrote.
    case plain
    /// A datastore of the typed API; its identifiers have this shape (nil: a key type of the
    /// app's own, or a datastore written before shapes were recorded).
    case datastore(KeyShape?)

    /// What `collection` is, in the root `reader` sees. A collection is a datastore when the typed
    /// layer recorded its identifier shape or index state, or when its first record is a typed
    /// record (its bytes are not JSON but a record envelope). O(log n).
    package static func kind(of collection: String, in reader: any CollectionReading) throws -> TypedCollection {
        let name = Array(collection.utf8)
        if let text = try reader.value(forKey: name, in: "$identifiers") {
            return .datastore(KeyShape(text: String(decoding: text, as: UTF8.self)))
        }
        if try reader.value(forKey: name, in: "$datastores") != nil { return .datastore(nil) }
        var first: [UInt8]?
        try reader.scan(collection, range: KeyRange(), reverse: false) { _, value in
            first = value
            return false
        }
        // JSON text never starts with a byte below 0x20; a record envelope starts with its coder tag (1 to 3).
        guard let first, let tag = first.first, ValueCoder(tag: tag) != nil,
            (try? RecordEnvelope.jsonDescription(of: first)) != nil
        else { return .plain }
        return .datastore(nil)
    }

    /// Deletes every entry of `collection` whose value is `key`. O(entries).
    static func removeEntries(naming key: [UInt8], from collection: String, in writer: WriteTransaction) throws {
        var stale: [[UInt8]] = []
        try writer.scan(collection, range: KeyRange(), reverse: false) { entry, recordKey in
            if recordKey == key { stale.append(entry) }
            return true
        }
        for entry in stale { _ = try writer.delete(entry, in: collection) }
    }

    /// Deletes the record under `key` from datastore `name` with every index entry that names it
    /// (scanning each index collection `name/...`, O(index entries), since a tool has no key
    /// paths to recompute the entries from). Returns whether a record was deleted.
    package static func deleteRecord(_ key: [UInt8], from name: String, in writer: WriteTransaction) throws -> Bool {
        guard try writer.delete(key, in: name) else { return false }
        for collection in try writer.collectionNames() where collection.hasPrefix(name + "/") {
            try removeEntries(naming: key, from: collection, in: writer)
        }
        return true
    }
}
