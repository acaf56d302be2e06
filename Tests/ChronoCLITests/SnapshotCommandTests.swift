// snapshot create, list, delete and checkout, and snapshots in history.
import Foundation
import Testing

@Suite("snapshot")
struct SnapshotCommandTests {
    @Test func createPinsTheHeadAndListShowsIt() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "a", "1")
        let head = try workspace.put("c", "b", "2")
        let created = try workspace.expectSuccess(["snapshot", "create", workspace.store, "before", "--json"]).object()
        #expect(Set(created.keys) == ["name", "root", "time", "records"])
        #expect(created["name"] as? String == "before")
        #expect(created["root"] as? Int == head)
        #expect(created["records"] as? Int == 2)
        let also = try workspace.expectSuccess(["snapshot", "create", workspace.store, "also", "--json"]).object()
        let alsoRoot = try #require(also["root"] as? Int)
        let listed = try workspace.expectSuccess(["snapshot", "list", workspace.store, "--json"]).objects()
        #expect(listed.map { $0["name"] as? String } == ["also", "before"])
        #expect(listed.map { $0["root"] as? Int } == [alsoRoot, head])
        let history = try workspace.expectSuccess(["history", workspace.store, "--all-branches", "--json"]).objects()
        let snapshotsByRoot = Dictionary(history.map { ($0["id"] as? Int ?? 0, Set($0["snapshots"] as? [String] ?? [])) }) { $0.union($1) }
        #expect(snapshotsByRoot[head]?.contains("before") == true)
        #expect(snapshotsByRoot[alsoRoot]?.contains("also") == true)
        let text = try workspace.expectSuccess(["snapshot", "list", workspace.store]).stdout
        #expect(text.hasPrefix("also\troot \(alsoRoot)\t"))
    }

    @Test func createLeavesTheHeadWhereItWas() throws {
        let workspace = try Workspace.withStore()
        let head = try workspace.put("c", "a", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "s"])
        let info = try workspace.expectSuccess(["info", workspace.store, "--json"]).object()
        #expect(info["head"] as? Int == head)
    }

    @Test func aSnapshotSurvivesPruningAndCanBeReadAtItsRoot() throws {
        let workspace = try Workspace.withStore("--retention", "all")
        let pinned = try workspace.put("c", "k", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "keep"])
        for value in 2...4 { try workspace.put("c", "k", String(value)) }
        try workspace.expectSuccess(["prune", workspace.store, "--keep-last", "1"])
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k", "--at", String(pinned)]).stdout == "1\n")
    }

    @Test func checkoutMakesTheSnapshotTheHeadAsAnUndoableCommit() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "one"])
        let later = try workspace.put("c", "k", "2")
        let checkout = try workspace.expectSuccess(["snapshot", "checkout", workspace.store, "one", "--json"]).object()
        #expect((checkout["root"] as? Int ?? 0) > later)
        #expect(try workspace.expectSuccess(["get", workspace.store, "c", "k"]).stdout == "1\n")
        #expect(try workspace.expectSuccess(["undo", workspace.store, "--json"]).object()["root"] as? Int == later)
    }

    @Test func deleteRemovesASnapshot() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "s"])
        let deleted = try workspace.expectSuccess(["snapshot", "delete", workspace.store, "s", "--json"]).object()
        #expect(deleted["deleted"] as? String == "s")
        #expect(try workspace.expectSuccess(["snapshot", "list", workspace.store, "--json"]).stdout == "[]\n")
    }

    @Test func unknownAndDuplicateSnapshotsAreReportedWithoutWriting() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "s"])
        let before = try workspace.storeBytes()
        try workspace.expectFailure(["snapshot", "create", workspace.store, "s"], exitCode: 4, message: "already exists")
        try workspace.expectFailure(["snapshot", "delete", workspace.store, "nope"], exitCode: 1, message: "no snapshot named \"nope\"")
        try workspace.expectFailure(["snapshot", "checkout", workspace.store, "nope"], exitCode: 1, message: "no snapshot named")
        try workspace.expectFailure(["snapshot", "create", workspace.store, ""], exitCode: 2, message: "NAME")
        #expect(try workspace.storeBytes() == before)
    }

    @Test func snapshotNeedsAKnownSubcommand() throws {
        let workspace = try Workspace.withStore()
        try workspace.expectFailure(["snapshot"], exitCode: 2, message: "snapshot needs a subcommand: create, list, delete, checkout")
        let unknown = try workspace.expectFailure(["snapshot", "take", workspace.store], exitCode: 2, message: "unknown snapshot command 'take'")
        #expect(unknown.stderr.contains("       chrono snapshot checkout STORE NAME [--label TEXT]\n"))
        try workspace.expectFailure(["snapshot", "create", workspace.store], exitCode: 2, message: "missing NAME")
    }
}
