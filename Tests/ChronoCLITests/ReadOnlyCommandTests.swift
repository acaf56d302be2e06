// Commands that only read the store (backup included) leave its file byte for byte as it was.
import Foundation
import Testing

@Suite("read-only commands")
struct ReadOnlyCommandTests {
    @Test func readingCommandsNeverChangeTheStoreFile() throws {
        let workspace = try Workspace.withStore()
        let first = try workspace.put("c", "a", "1")
        try workspace.put("c", "b", "2")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "s"])
        let before = try workspace.storeBytes()
        let commands: [[String]] = [
            ["get", workspace.store, "c", "a"], ["get", workspace.store, "c", "a", "--at", String(first)],
            ["list", workspace.store, "c", "--json"], ["history", workspace.store, "--all-branches"],
            ["snapshot", "list", workspace.store], ["info", workspace.store], ["verify", workspace.store, "--json"],
            ["backup", workspace.store, workspace.directory.file("backup.chrono")],
            ["backup", workspace.store, workspace.directory.file("first.chrono"), "--at", String(first)],
        ]
        for command in commands {
            try workspace.expectSuccess(command)
            #expect(try workspace.storeBytes() == before, "\(command.joined(separator: " ")) changed the store")
        }
    }

    /// get, list, history, info, verify and backup open the store read-only: on a store with no
    /// lock file (as on read-only media) they create none, and a read-only store file is fine.
    @Test func readingCommandsCreateNoLockFileAndReadAReadOnlyFile() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "a", "1")
        try FileManager.default.removeItem(atPath: workspace.store + ".lock")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: workspace.store)
        let commands: [[String]] = [
            ["get", workspace.store, "c", "a"], ["list", workspace.store, "c"], ["history", workspace.store],
            ["info", workspace.store], ["verify", workspace.store],
            ["backup", workspace.store, workspace.directory.file("backup.chrono")],
        ]
        for command in commands {
            try workspace.expectSuccess(command)
            #expect(!FileManager.default.fileExists(atPath: workspace.store + ".lock"), "\(command.joined(separator: " ")) made a lock file")
        }
    }
}
