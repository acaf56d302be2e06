// Replacing or deleting a record that does not decode: its index entries are found by scanning, not recomputed.
import ChronoStoreEngine

extension DatastoreFormat {
    /// The instance a write is about to replace or delete, decoded to update its index entries.
    ///
    /// A record that does not decode (``ChronoStoreError/undecodableRecord(datastore:identifier:reason:)``)
    /// must not block its own repair, so instead of failing, every entry of the built indexes
    /// that names `key` is removed (a scan of each index, O(index entries): the old values cannot
    /// be recomputed) and nil is returned, as if there had been no record. Other errors, such as a
    /// version the format refuses, still throw: that record is intact, just not for this format.
    static func decodeReplaced(
        _ record: [UInt8], key: [UInt8], built: [AnyDatastoreIndex<Self>], in writer: WriteTransaction
    ) throws -> Instance? {
        do {
            return try decodeRecord(record, key: key)
        } catch ChronoStoreError.undecodableRecord {
            for index in built { try TypedCollection.removeEntries(naming: key, from: index.collectionName, in: writer) }
            return nil
        }
    }
}
