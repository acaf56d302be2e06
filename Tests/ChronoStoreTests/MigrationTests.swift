// Versioned formats: older records decode lazily on read, and warm() rewrites them.
import ChronoStore
import Foundation
import Testing

struct ContactV1: Codable, Sendable, Identifiable {
    var id: Int
    var fullName: String
}

struct Contact: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var firstName: String
    var lastName: String
}

enum ContactFormatV1: DatastoreFormat {
    typealias Instance = ContactV1
    static let name = "contacts"
}

enum ContactFormat: DatastoreFormat {
    typealias Instance = Contact
    static let name = "contacts"
    static var currentVersion: Int { 2 }
    static let lastName = DatastoreIndex<Self, String>.oneToMany("lastName", \.lastName)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(lastName)] }

    static func decode(version: Int, from record: StoredRecord) throws -> Contact {
        guard version == 1 else {
            throw ChronoStoreError.unsupportedRecordVersion(datastore: name, version: version, current: currentVersion)
        }
        let old = try record.decode(ContactV1.self)
        let parts = old.fullName.split(separator: " ", maxSplits: 1).map(String.init)
        return Contact(id: old.id, firstName: parts.first ?? "", lastName: parts.count > 1 ? parts[1] : "")
    }
}

enum ContactFormatV3: DatastoreFormat {
    typealias Instance = Contact
    static let name = "contacts"
    static var currentVersion: Int { 3 }
}

@Suite struct MigrationTests {
    @Test func olderVersionsDecodeLazilyAndWarmRewritesThem() async throws {
        let store = try ChronoStore.inMemory()
        let old = store.datastore(ContactFormatV1.self)
        try await old.persist(ContactV1(id: 1, fullName: "Ada Lovelace"))
        try await old.persist(ContactV1(id: 2, fullName: "Alan Turing"))
        let contacts = store.datastore(ContactFormat.self)
        #expect(try await contacts.load(1) == Contact(id: 1, firstName: "Ada", lastName: "Lovelace"))
        #expect(try await contacts.loadAll().collect().map(\.lastName) == ["Lovelace", "Turing"])
        var steps: [WarmProgress] = []
        let report = try await contacts.warm { steps.append($0) }
        #expect(report.migratedRecords == 2)
        #expect(report.builtIndexes == ["lastName"])
        #expect(steps == [WarmProgress(recordsDone: 2, recordsTotal: 2)])
        #expect(try await contacts.first(ContactFormat.lastName, equalTo: "Turing")?.id == 2)
        // Rewritten at version 2: the version-1 format can no longer read them.
        await #expect(throws: ChronoStoreError.unsupportedRecordVersion(datastore: "contacts", version: 2, current: 1)) {
            _ = try await old.load(1)
        }
        #expect(try await contacts.warm().migratedRecords == 0)
    }

    @Test func aNewerRecordThanTheFormatKnowsIsATypedError() async throws {
        let store = try ChronoStore.inMemory()
        try await store.datastore(ContactFormatV3.self).persist(Contact(id: 1, firstName: "A", lastName: "B"))
        await #expect(throws: ChronoStoreError.unsupportedRecordVersion(datastore: "contacts", version: 3, current: 2)) {
            _ = try await store.datastore(ContactFormat.self).load(1)
        }
    }
}
