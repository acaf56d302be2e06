// Records written through the typed API show as JSON in `chrono`, without their Swift type.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Note: Codable, Sendable, Identifiable {
    var id: String
    var title: String
    var stars: Int
    var tags: [String]
}

private enum NoteFormat: DatastoreFormat {
    typealias Instance = Note
    static let name = "notes"
}

@Suite("typed records on the command line")
struct TypedRecordTests {
    @Test func getAndListShowTypedRecordsAsJSON() async throws {
        let workspace = try Workspace()
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: workspace.store))
        try await store.datastore(NoteFormat.self).persist(Note(id: "a", title: "Buy milk", stars: 3, tags: ["home"]))
        try await store.close()
        let listed = try workspace.expectSuccess(["list", workspace.store, "notes", "--json"]).objects()
        #expect(listed.count == 1)
        let value = try #require(listed.first?["value"] as? [String: Any])
        #expect(value["version"] as? Int != nil)
        let record = try #require(value["value"] as? [String: Any])
        #expect(record["title"] as? String == "Buy milk")
        #expect(record["stars"] as? Int == 3)
        #expect(record["tags"] as? [String] == ["home"])
    }
}
