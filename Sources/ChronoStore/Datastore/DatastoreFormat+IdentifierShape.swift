// Recording each datastore's identifier shape in `$identifiers`, so tools can read typed keys.
import ChronoStoreEngine

extension DatastoreFormat {
    /// The collection mapping datastore names to their identifier's ``KeyShape`` text (or
    /// `opaque` for a key type of the app's own). Its presence also marks a collection as a
    /// typed datastore, whose records `chrono` refuses to overwrite without `--raw`.
    static var identifiersCollectionName: String { "$identifiers" }

    /// The text recorded for this datastore's identifier type.
    static var identifierShapeText: String { KeyShape.of(Identifier.self)?.text ?? "opaque" }

    /// Before a write: records the identifier shape if it is missing or changed. Only the first
    /// write per datastore in a transaction reads it (cached in `log`). O(log datastores).
    static func recordIdentifierShape(in writer: WriteTransaction, log: inout ChangeLog) throws {
        guard !log.describedDatastores.contains(name) else { return }
        let text = Array(identifierShapeText.utf8)
        if try writer.value(forKey: metadataKey, in: identifiersCollectionName) != text {
            try writer.put(metadataKey, text, in: identifiersCollectionName)
        }
        log.describedDatastores.insert(name)
    }
}
