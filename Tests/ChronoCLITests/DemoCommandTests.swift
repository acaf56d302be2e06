// `chrono demo`: the guided tour leaves a sound store and explains each step.
import Foundation
import Testing

@Suite("demo")
struct DemoCommandTests {
    @Test func demoInADirectoryTellsEachStepAndLeavesASoundStore() throws {
        let workspace = try Workspace()
        let directory = workspace.directory.file("tour")
        let result = try workspace.expectSuccess(["demo", directory])
        for step in ["1. Created a store", "2. Committed root", "3. The history", "4. Undo moved the head", "Redo moved it",
                     "5. Took the snapshot", "6. Undid back to root", "branch", "7. Backed up the head", "verified it",
                     "all sound; it holds 3 notes", "8. The history with every branch", "9. Verified the store"] {
            #expect(result.stdout.contains(step), "the tour mentions \(step)")
        }
        let store = directory + "/demo.chrono"
        try workspace.expectSuccess(["verify", store])
        let history = try workspace.expectSuccess(["history", store, "--all-branches", "--json"]).objects()
        #expect(history.contains { ($0["snapshots"] as? [String]) == ["three-notes"] })
        #expect(history.contains { $0["label"] as? String == "Add a different note" && $0["head"] as? Bool == true })
        let notes = try workspace.expectSuccess(["list", store, "notes", "--json"]).objects().map { $0["key"] as? String }
        #expect(notes == ["note-1", "note-2", "note-4"])
        let backup = directory + "/demo-backup.chrono"
        #expect(result.stdout.contains("$ chrono backup \(store) \(backup)"))
        try workspace.expectSuccess(["verify", backup])
        #expect(try workspace.expectSuccess(["list", backup, "notes", "--json"]).stdout
            == workspace.expectSuccess(["list", store, "notes", "--json"]).stdout)
    }

    @Test func demoWithoutADirectoryUsesAFreshTemporaryOne() throws {
        let workspace = try Workspace()
        let result = try workspace.expectSuccess(["demo", "--json"])
        let summary = try result.object()
        let store = try #require(summary["store"] as? String)
        #expect(store.hasPrefix(workspace.directory.path))
        #expect(store.hasSuffix("/demo.chrono"))
        #expect(summary["backup"] as? String == (store as NSString).deletingLastPathComponent + "/demo-backup.chrono")
        #expect(try workspace.expectSuccess(["info", store, "--json"]).object()["head"] as? Int == summary["head"] as? Int)
    }

    @Test func demoRefusesADirectoryThatAlreadyHoldsADemoStore() throws {
        let workspace = try Workspace()
        try workspace.expectSuccess(["demo", workspace.directory.path, "--json"])
        try workspace.expectFailure(["demo", workspace.directory.path], exitCode: 4, message: "already exists")
    }

    @Test func demoRefusesADirectoryThatAlreadyHoldsADemoBackupAndCreatesNoStore() throws {
        let workspace = try Workspace()
        try Data("keep".utf8).write(to: URL(fileURLWithPath: workspace.directory.file("demo-backup.chrono")))
        try workspace.expectFailure(["demo", workspace.directory.path], exitCode: 4, message: "already exists at")
        #expect(try workspace.fileNames() == ["demo-backup.chrono"])
    }
}
