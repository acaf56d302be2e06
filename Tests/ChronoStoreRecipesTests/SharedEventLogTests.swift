// SharedEventLog: an extension process records, the app's change stream sees it; retention, clear, export.
import ChronoStore
import ChronoStoreRecipes
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Quote: Codable, Sendable, Equatable {
    var symbol: String
    var price: Decimal
}

@Suite struct SharedEventLogTests {
    @Test func theAppSeesEventsAnExtensionProcessRecords() async throws {
        let directory = try TemporaryDirectory(prefix: "recipes")
        let path = directory.file("group.chrono")
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: path))
        let log = SharedEventLog<String>(store: store, name: "quotes")
        try await log.record("app-0", source: "app")
        let stream = log.changes()
        let extensionRun = Task { try await RecipeHelperProcess.run(["log-events", path, "20"]) }
        var seen: [String] = []
        for try await event in stream {
            #expect(event.source == "extension")
            seen.append(event.payload)
            if seen.count == 20 { break }
        }
        let (status, errors) = try await extensionRun.value
        #expect(status == 0, "\(errors)")
        #expect(seen == (0..<20).map { "extension-\($0)" }, "in the order the extension recorded them")
        let all = try await log.events()
        #expect(all.count == 21)
        #expect(all.last?.payload == "app-0" && all.first?.payload == "extension-19")
        try await store.close()
        // Relaunch: the events are in the file.
        let reopened = try await ChronoStore.open(at: URL(fileURLWithPath: path))
        #expect(try await SharedEventLog<String>(store: reopened, name: "quotes").events(limit: 1).first?.payload == "extension-19")
        try await reopened.close()
    }

    @Test func keepsTheLast500WithinNinetyDaysAndClears() async throws {
        let store = try ChronoStore.inMemory(options: ChronoStoreOptions(durability: .deferred()))
        let log = SharedEventLog<Int>(store: store, name: "events")
        let now = Date()
        try await log.record(-1, source: "app", date: now.addingTimeInterval(-91 * 86_400))
        try await log.record(-2, source: "app", date: now.addingTimeInterval(-89 * 86_400))
        #expect(try await log.events().map(\.payload) == [-2, -1])
        try await log.record(0, source: "app", date: now)
        #expect(try await log.events().map(\.payload) == [0, -2], "older than 90 days is dropped")
        try await store.transaction {
            for value in 1...520 { try await log.record(value, source: "widget", date: now.addingTimeInterval(Double(value))) }
        }
        let kept = try await log.events()
        #expect(kept.count == 500)
        #expect(kept.first?.payload == 520 && kept.last?.payload == 21)
        try await log.clear()
        #expect(try await log.events().isEmpty)
    }

    @Test func exportsJSONAndCSV() async throws {
        let store = try ChronoStore.inMemory()
        let log = SharedEventLog<Quote>(store: store, name: "quotes")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try await log.record(Quote(symbol: "ACME", price: Decimal(string: "12.34")!), source: "app", date: start)
        try await log.record(Quote(symbol: "A,\"B\"", price: 1), source: "widget", date: start.addingTimeInterval(1.5))
        let json = try await log.exportJSON()
        let objects = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
        #expect(objects.map { $0["source"] as? String } == ["app", "widget"])
        #expect(objects.first?["date"] as? String == "2023-11-14T22:13:20.000Z")
        #expect((objects.first?["payload"] as? [String: Any])?["symbol"] as? String == "ACME")

        let csv = try await log.exportCSV()
        let lines = csv.components(separatedBy: "\r\n")
        #expect(lines.count == 4 && lines[3].isEmpty)
        #expect(lines[0] == "id,date,source,payload")
        #expect(lines[1].hasSuffix(",2023-11-14T22:13:20.000Z,app,\"{\"\"price\"\":12.34,\"\"symbol\"\":\"\"ACME\"\"}\""), "\(lines[1])")
        #expect(lines[2].contains(",widget,"))

        let strings = SharedEventLog<String>(store: store, name: "notes")
        try await strings.record("plain text", source: "app", date: start)
        #expect(try await strings.exportCSV().contains(",app,plain text\r\n"))
    }
}
