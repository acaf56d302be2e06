// Typed identifiers on the command line: listed as JSON, addressed by it, and guarded against raw writes.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Visit: Codable, Sendable, Equatable {
    var place: String
    var number: Int
    var badge: String
}

private enum VisitFormat: DatastoreFormat {
    typealias Instance = Visit
    typealias Identifier = KeyTuple2<String, Int>
    static let name = "visits"
    static let badge = DatastoreIndex<Self, String>.oneToOne("badge", \.badge)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(badge)] }
    static func identifier(of instance: Visit) -> KeyTuple2<String, Int> { KeyTuple2(instance.place, instance.number) }
}

private struct Tagged<ID: OrderedKey & Hashable & Codable>: Codable, Sendable, Identifiable {
    var id: ID
    var text: String
}

private enum ByNumber: DatastoreFormat {
    typealias Instance = Tagged<Int>
    static let name = "by-number"
}

private enum ByText: DatastoreFormat {
    typealias Instance = Tagged<String>
    static let name = "by-text"
}

private enum ByUUID: DatastoreFormat {
    typealias Instance = Tagged<UUID>
    static let name = "by-uuid"
}

private enum ByDate: DatastoreFormat {
    typealias Instance = Tagged<Date>
    static let name = "by-date"
}

@Suite("typed identifiers on the command line")
struct TypedKeyCommandTests {
    private static let id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    /// A whole-millisecond instant (its ISO-8601 text is exact) and one that is not.
    private static let roundDate = Date(timeIntervalSinceReferenceDate: 785_000_000.125)
    private static let oddDate = Date(timeIntervalSinceReferenceDate: 785_000_000.001237)

    private func makeStore() async throws -> Workspace {
        let workspace = try Workspace()
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: workspace.store))
        try await store.datastore(ByNumber.self).persist(contentsOf: [Tagged(id: -7, text: "minus"), Tagged(id: 42, text: "answer")])
        try await store.datastore(ByText.self).persist(contentsOf: [Tagged(id: "tab\there", text: "t"), Tagged(id: "7", text: "seven")])
        try await store.datastore(ByUUID.self).persist(Tagged(id: Self.id, text: "u"))
        try await store.datastore(ByDate.self).persist(contentsOf: [Tagged(id: Self.roundDate, text: "round"), Tagged(id: Self.oddDate, text: "odd")])
        try await store.datastore(VisitFormat.self).persist(contentsOf: [
            Visit(place: "Oslo", number: 2, badge: "b2"), Visit(place: "Oslo", number: 10, badge: "b10"),
        ])
        try await store.close()
        return workspace
    }

    private func keys(_ workspace: Workspace, _ collection: String, _ extra: [String] = []) async throws -> [Any] {
        try await workspace.succeed(["list", workspace.store, collection, "--json"] + extra).objects().map { $0["key"]! }
    }

    @Test func listDecodesNumbersStringsUUIDsDatesAndTuplesAsJSON() async throws {
        let workspace = try await makeStore()
        #expect(try await keys(workspace, "by-number") as? [Int] == [-7, 42])
        #expect(try await keys(workspace, "by-text") as? [String] == ["7", "tab\there"])
        #expect(try await keys(workspace, "by-uuid") as? [String] == [Self.id.uuidString])
        let dates = try await keys(workspace, "by-date")
        let odd = try #require(dates.first as? [String: Any])
        #expect(odd["sinceReferenceDate"] as? Double == Self.oddDate.timeIntervalSinceReferenceDate)
        #expect(dates.last as? String == "2025-11-16T15:33:20.125Z")
        let tuples = try #require(try await keys(workspace, "visits") as? [[Any]])
        #expect(tuples.map { $0[0] as? String } == ["Oslo", "Oslo"])
        #expect(tuples.map { $0[1] as? Int } == [2, 10])
        let plain = try await workspace.succeed(["list", workspace.store, "visits", "--reverse"]).stdout
        #expect(plain.hasPrefix("[\"Oslo\",10]\t"))
        let ranged = try await keys(workspace, "by-number", ["--from", "0"])
        #expect(ranged as? [Int] == [42])
    }

    @Test func getAndDeleteTakeTheIdentifierAsListShowsIt() async throws {
        let workspace = try await makeStore()
        let answer = try await workspace.succeed(["get", workspace.store, "by-number", "42"]).object()
        #expect((answer["value"] as? [String: Any])?["text"] as? String == "answer")
        try await workspace.succeed(["get", workspace.store, "by-uuid", Self.id.uuidString])
        try await workspace.succeed(["get", workspace.store, "by-date", "2025-11-16T15:33:20.125Z"])
        try await workspace.succeed([
            "get", workspace.store, "by-date", "{\"sinceReferenceDate\":\(Self.oddDate.timeIntervalSinceReferenceDate)}",
        ])
        try await workspace.succeed(["get", workspace.store, "by-text", "\"tab\\there\""])
        let seven = try await workspace.succeed(["get", workspace.store, "by-text", "7"]).object()
        #expect((seven["value"] as? [String: Any])?["text"] as? String == "seven", "7 names the string \"7\"")
        try await workspace.fail(["get", workspace.store, "by-number", "41"], exitCode: 1, message: "no key")
        try await workspace.fail(["get", workspace.store, "by-number", "forty"], exitCode: 2, message: "not an identifier")
        try await workspace.succeed(["delete", workspace.store, "visits", "[\"Oslo\",10]"])
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: workspace.store))
        let visits = store.datastore(VisitFormat.self)
        #expect(try await visits.load(KeyTuple2("Oslo", 10)) == nil)
        // The unique index entry went with the record: its badge is free again.
        #expect(try await visits.first(VisitFormat.badge, equalTo: "b10") == nil)
        try await visits.persist(Visit(place: "Bergen", number: 1, badge: "b10"))
        #expect(try await visits.count() == 2)
        try await store.close()
    }

    @Test func aWriteIntoATypedDatastoreIsRefusedUnlessRaw() async throws {
        let workspace = try await makeStore()
        let before = try await workspace.succeed(["history", workspace.store, "--json"]).objects().count
        let refused = try await workspace.runOffPool(["put", workspace.store, "by-text", "b", #"{"text":"plain"}"#])
        #expect(refused.exitCode == 2)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("typed datastore"), "\(refused.stderr)")
        let applied = try await workspace.runOffPool(["apply", workspace.store], stdin: #"{"put":{"c":"by-number","k":"x","v":1}}"# + "\n")
        #expect(applied.exitCode == 2 && applied.stderr.contains("typed datastore"), "\(applied.stderr)")
        let after = try await workspace.succeed(["history", workspace.store, "--json"]).objects().count
        #expect(after == before, "nothing was committed")
        // Plain collections are untouched by the guard.
        try await workspace.succeed(["put", workspace.store, "notes", "n1", "1"])
        try await workspace.succeed(["put", workspace.store, "by-text", "b", #"{"text":"plain"}"#, "--raw"])
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: workspace.store))
        let texts = store.datastore(ByText.self)
        #expect(try await texts.loadAll().collect().map(\.id) == ["7", "tab\there"], "the bad record is skipped, the good ones load")
        await #expect(throws: ChronoStoreError.self) { _ = try await texts.load("b") }
        do {
            _ = try await texts.load("b")
        } catch let error as ChronoStoreError {
            guard case .undecodableRecord(let datastore, let identifier, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(datastore == "by-text" && identifier == "\"b\"")
        }
        var failures: [String] = []
        for try await result in texts.loadAll().results() {
            if case .failure(.undecodableRecord(_, let identifier, _)) = result { failures.append(identifier) }
        }
        #expect(failures == ["\"b\""])
        try await store.close()
        // The tool can remove the bad record by its identifier.
        try await workspace.succeed(["delete", workspace.store, "by-text", "b"])
        // apply --raw names typed records the same way.
        try await workspace.succeed(["apply", workspace.store, "--raw"], stdin: #"{"delete":{"c":"by-number","k":"42"}}"# + "\n")
        try await workspace.fail(["get", workspace.store, "by-number", "42"], exitCode: 1, message: "no key")
    }
}

extension Workspace {
    /// Runs `chrono` on a thread of its own: these tests are `async`, and waiting for a process on
    /// a cooperative-pool thread would hold one of the pool's few threads, which the main-actor
    /// stall tests running in parallel need.
    fileprivate func runOffPool(_ arguments: [String], stdin: String? = nil) async throws -> ChronoResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try self.run(arguments, stdin: stdin) }) }
        }
    }

    /// ``expectSuccess(_:stdin:sourceLocation:)`` off the pool.
    @discardableResult
    fileprivate func succeed(_ arguments: [String], stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ChronoResult {
        let result = try await runOffPool(arguments, stdin: stdin)
        #expect(result.exitCode == 0, "chrono \(arguments.joined(separator: " ")) failed: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "unexpected stderr: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    /// ``expectFailure(_:exitCode:message:stdin:sourceLocation:)`` off the pool.
    fileprivate func fail(
        _ arguments: [String], exitCode: Int32, message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await runOffPool(arguments)
        #expect(result.exitCode == exitCode, "exit \(result.exitCode), stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "unexpected stdout: \(result.stdout)", sourceLocation: sourceLocation)
        let first = result.stderrLines.first ?? ""
        #expect(first.hasPrefix("chrono: ") && first.contains(message), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }
}
