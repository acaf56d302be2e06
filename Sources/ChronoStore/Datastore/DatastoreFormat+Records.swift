// Turning instances into stored records and back, with lazy migration; identifiers into keys.
import ChronoStoreEngine

extension DatastoreFormat {
    /// The stored bytes of `instance`: envelope (coder, current version) and payload.
    static func encodeRecord(_ instance: Instance) throws -> [UInt8] {
        do {
            return RecordEnvelope.wrap(try coder.encode(instance), coder: coder, version: currentVersion)
        } catch {
            throw ChronoStoreError.encodingFailed(datastore: name, reason: "\(error)")
        }
    }

    /// Decodes stored bytes, migrating older versions through ``decode(version:from:)``.
    static func decodeRecord(_ bytes: [UInt8]) throws -> Instance {
        let (recordCoder, version, start) = try RecordEnvelope.header(bytes)
        if version != currentVersion {
            let record = StoredRecord(version: version, coder: recordCoder, payload: Array(bytes[start...]))
            return try decode(version: version, from: record)
        }
        do {
            if recordCoder == .binary { return try ChronoBinaryCoder().decode(Instance.self, from: bytes, at: start) }
            return try recordCoder.decode(Instance.self, from: Array(bytes[start...]))
        } catch let error as ChronoStoreError {
            throw error
        } catch {
            throw ChronoStoreError.decodingFailed(datastore: name, reason: "\(error)")
        }
    }

    /// Decodes the record stored under `key`; a failure to decode names the record
    /// (``ChronoStoreError/undecodableRecord(datastore:identifier:reason:)``). A version the format
    /// refuses stays ``ChronoStoreError/unsupportedRecordVersion(datastore:version:current:)``.
    static func decodeRecord(_ bytes: [UInt8], key: [UInt8]) throws -> Instance {
        do {
            return try decodeRecord(bytes)
        } catch let error as ChronoStoreError {
            switch error {
            case .decodingFailed(_, let reason), .malformedRecord(let reason):
                throw ChronoStoreError.undecodableRecord(datastore: name, identifier: describe(key: key), reason: reason)
            default: throw error
            }
        } catch {
            throw ChronoStoreError.undecodableRecord(datastore: name, identifier: describe(key: key), reason: "\(error)")
        }
    }

    /// Whether stored bytes were written at an older (or other) version than the current one.
    static func needsMigration(_ bytes: [UInt8]) throws -> Bool { try RecordEnvelope.header(bytes).version != currentVersion }

    /// The key of an identifier in the datastore's collection.
    static func key(_ identifier: Identifier) -> [UInt8] { identifier.orderedKeyBytes }

    /// The engine collection holding the records.
    static var collectionName: String { name }

    /// The engine collection holding index `index`.
    static func indexCollectionName(_ index: String) -> String { name + "/" + index }

    /// The collection holding per-datastore metadata (index build state), shared by all formats.
    static var metadataCollectionName: String { "$datastores" }

    /// Checks the datastore's name (it names an engine collection). O(name length).
    static func validateName() throws {
        let bytes = name.utf8.count
        // Bytes, not `contains(_: StringProtocol)`: with Foundation imported that is a substring
        // search of about 4 k instructions, and every persist checks the name.
        guard bytes >= 1, bytes <= 200, !name.utf8.contains(UInt8(ascii: "/")), !name.hasPrefix("$") else {
            throw ChronoStoreError.invalidOptions(
                "datastore name \"\(name)\" must be 1 to 200 bytes of UTF-8, without \"/\", not starting with \"$\"")
        }
    }

    /// Checks the declared indexes' names: unique, 1 to 50 bytes, no "/".
    static func validateIndexNames(_ declared: [AnyDatastoreIndex<Self>]) throws {
        var seen = Set<String>()
        for index in declared {
            guard (1...50).contains(index.name.utf8.count), !index.name.utf8.contains(UInt8(ascii: "/")),
                seen.insert(index.name).inserted
            else {
                throw ChronoStoreError.invalidOptions(
                    "index name \"\(index.name)\" of \(name) must be unique, 1 to 50 bytes of UTF-8, without \"/\"")
            }
        }
    }
}
