// `chrono compact`: the file shrinks, contents and undo stay, damage and bad input are reported.
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("compact command")
struct CompactCommandTests {
    /// 600 records committed, then 500 of them deleted.
    private func fillAndDelete(_ workspace: Workspace) throws {
        let puts = (0..<600).map { "{\"put\":{\"c\":\"c\",\"k\":\"k\($0)\",\"v\":{\"n\":\($0),\"pad\":\"\(String(repeating: "x", count: 120))\"}}}" }
        try workspace.expectSuccess(["apply", workspace.store], stdin: "[" + puts.joined(separator: ",") + "]\n")
        let deletes = (0..<500).map { "{\"delete\":{\"c\":\"c\",\"k\":\"k\($0)\"}}" }.joined(separator: ",")
        try workspace.expectSuccess(["apply", workspace.store], stdin: "[" + deletes + "]\n")
    }

    @Test func compactAfterPruningShrinksTheFileAndKeepsEveryRecord() throws {
        let workspace = try Workspace.withStore()
        try fillAndDelete(workspace)
        try workspace.expectSuccess(["prune", workspace.store, "--keep-last", "1"])
        let before = try workspace.storeBytes().count
        let report = try workspace.expectSuccess(["compact", workspace.store, "--json"]).object()
        let after = try workspace.storeBytes().count
        #expect(after < before)
        #expect(report["bytesAfter"] as? Int == after)
        #expect(report["bytesBefore"] as? Int == before)
        #expect(try workspace.expectSuccess(["list", workspace.store, "c", "--json"]).objects().count == 100)
        try workspace.expectSuccess(["verify", workspace.store])
    }

    @Test func compactKeepsUndoAndNeverGrowsTheFile() throws {
        let workspace = try Workspace.withStore("--retention", "last:5")
        try fillAndDelete(workspace)
        let before = try workspace.storeBytes().count
        try workspace.expectSuccess(["compact", workspace.store])
        #expect(try workspace.storeBytes().count <= before)
        // The compacted root took the head's place: undo still goes back before the deletes.
        try workspace.expectSuccess(["undo", workspace.store])
        #expect(try workspace.expectSuccess(["list", workspace.store, "c", "--json"]).objects().count == 600)
        try workspace.expectSuccess(["verify", workspace.store])
    }

    @Test func compactOfAMissingStoreFailsWithoutCreatingIt() throws {
        let workspace = try Workspace()
        try workspace.expectFailure(["compact", workspace.store], exitCode: 4, message: "no store")
        #expect(try workspace.fileNames().filter { $0.hasPrefix("store") } == [])
    }

    @Test func compactWithoutAStoreIsAUsageError() throws {
        let workspace = try Workspace()
        try workspace.expectFailure(["compact"], exitCode: 2, message: "STORE")
    }
}
