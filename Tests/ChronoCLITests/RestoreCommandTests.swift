// restore: a backup's contents as an undoable commit, or replacing the whole store offline; a
// damaged or missing backup changes nothing.
import Foundation
import Testing

@Suite("restore")
struct RestoreCommandTests {
    /// A store holding a=1 and b=2, backed up to `backup.chrono`, then changed to a=9, c=3.
    private func storeChangedSinceItsBackup() throws -> (workspace: Workspace, backup: String) {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "a", "1")
        try workspace.put("c", "b", "2")
        let backup = workspace.directory.file("backup.chrono")
        try workspace.expectSuccess(["backup", workspace.store, backup])
        try workspace.put("c", "a", "9")
        try workspace.expectSuccess(["delete", workspace.store, "c", "b"])
        try workspace.put("c", "c", "3")
        return (workspace, backup)
    }

    /// A copy of `backup` with one byte near its end flipped.
    private func damagedCopy(of backup: String, in workspace: Workspace) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: backup)))
        bytes[bytes.count - 100] ^= 0xFF
        let damaged = workspace.directory.file("damaged.chrono")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        return damaged
    }

    private func list(_ path: String, in workspace: Workspace) throws -> String {
        try workspace.expectSuccess(["list", path, "c", "--json"]).stdout
    }

    @Test func restoreCommitsTheBackupsContentsAndUndoBringsBackThePreviousHead() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let before = try list(workspace.store, in: workspace)
        let previousHead = try workspace.expectSuccess(["info", workspace.store, "--json"]).object()["head"] as? Int
        let restored = try workspace.expectSuccess(["restore", workspace.store, backup, "--label", "Back to Monday", "--json"]).object()
        #expect(Set(restored.keys) == ["root"])
        let root = try #require(restored["root"] as? Int)
        #expect(try workspace.expectSuccess(["info", workspace.store, "--json"]).object()["head"] as? Int == root)
        #expect(try list(workspace.store, in: workspace) == list(backup, in: workspace))
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        #expect(history.first?["label"] as? String == "Back to Monday")
        #expect(history.first?["parent"] as? Int == previousHead)
        let undone = try workspace.expectSuccess(["undo", workspace.store, "--json"]).object()
        #expect(undone["root"] as? Int == previousHead)
        #expect(try list(workspace.store, in: workspace) == before)
    }

    @Test func restoreWithoutALabelIsLabelledRestoreAndSaysHowToUndoIt() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let text = try workspace.expectSuccess(["restore", workspace.store, backup]).stdout
        #expect(text.hasPrefix("Restored \(backup) into \(workspace.store): root "))
        #expect(text.contains("chrono undo \(workspace.store)"))
        #expect(try workspace.expectSuccess(["history", workspace.store, "--json"]).objects().first?["label"] as? String == "Restore")
    }

    @Test func aDamagedBackupExitsThreeAndLeavesTheStoreByteForByte() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let damaged = try damagedCopy(of: backup, in: workspace)
        let before = try workspace.storeBytes()
        try workspace.expectFailure(["restore", workspace.store, damaged], exitCode: 3, message: "failed verification")
        #expect(try workspace.storeBytes() == before)
        try workspace.expectFailure(["restore", workspace.store, damaged, "--replace"], exitCode: 3, message: "failed verification")
        #expect(try workspace.storeBytes() == before)
    }

    @Test func aMissingStoreOrBackupExitsFourAndCreatesNothing() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let before = try workspace.storeBytes()
        let files = try workspace.fileNames()
        let missing = workspace.directory.file("missing.chrono")
        for extra in [[], ["--replace"]] {
            try workspace.expectFailure(["restore", workspace.store, missing] + extra, exitCode: 4, message: "no backup at \(missing)")
            try workspace.expectFailure(["restore", missing, backup] + extra, exitCode: 4, message: "no store at \(missing)")
        }
        #expect(try workspace.storeBytes() == before)
        #expect(try workspace.fileNames() == files)
    }

    @Test func replaceSwapsTheWholeStoreFileForTheBackup() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let backupHead = try workspace.expectSuccess(["info", backup, "--json"]).object()["head"] as? Int
        let backupHistory = try workspace.expectSuccess(["history", backup, "--json"]).stdout
        let replaced = try workspace.expectSuccess(["restore", workspace.store, backup, "--replace", "--json"]).object()
        #expect(replaced["root"] as? Int == backupHead)
        #expect(try workspace.storeBytes() == Data(contentsOf: URL(fileURLWithPath: backup)))
        #expect(try workspace.expectSuccess(["history", workspace.store, "--json"]).stdout == backupHistory)
        #expect(try list(workspace.store, in: workspace) == #"[{"key":"a","value":1},{"key":"b","value":2}]"# + "\n")
        try workspace.expectSuccess(["verify", workspace.store])
    }

    @Test func replaceRefusesWhileAnotherProcessHasTheStoreOpen() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let writer = try workspace.start(["apply", workspace.store])
        try writer.send(#"{"put":{"c":"c","k":"d","v":4}}"#)
        #expect(writer.readLine() != nil, "apply committed its first line and holds the store open")
        // Opening a store whose newest commit another process has not yet marked verified checks
        // that commit and marks it, a header write; so compare contents here, not bytes.
        let before = try workspace.expectSuccess(["history", workspace.store, "--json"]).stdout
        try workspace.expectFailure(["restore", workspace.store, backup, "--replace"], exitCode: 4, message: "open in another process")
        #expect(try workspace.expectSuccess(["history", workspace.store, "--json"]).stdout == before)
        #expect(try list(workspace.store, in: workspace).contains(#"{"key":"d","value":4}"#))
        #expect(try writer.finish().exitCode == 0)
        try workspace.expectSuccess(["restore", workspace.store, backup, "--replace"])
        #expect(try list(workspace.store, in: workspace) == list(backup, in: workspace))
    }

    @Test func replaceLeavesAFileThatIsNotAStoreAlone() throws {
        let (workspace, backup) = try storeChangedSinceItsBackup()
        let notes = workspace.directory.file("notes.txt")
        let contents = Data("my notes\n".utf8)
        try contents.write(to: URL(fileURLWithPath: notes))
        try workspace.expectFailure(["restore", notes, backup, "--replace"], exitCode: 4, message: "is not a ChronoStore file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: notes)) == contents)
        try workspace.expectFailure(["restore", workspace.store, backup, "--replace", "--label", "x"], exitCode: 2, message: "--replace")
    }
}
