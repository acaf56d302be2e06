// backup: a self-contained copy of one root, and every way it refuses without writing anything.
import Foundation
import Testing

@Suite("backup")
struct BackupCommandTests {
    @Test func aBackupOfTheHeadIsAStoreOfItsOwnThatReadsTheSameRecords() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("notes", "a", #"{"title":"Buy milk"}"#, label: "Add a")
        let head = try workspace.put("notes", "b", "[1,2,3]", label: "Add b")
        let backup = workspace.directory.file("backup.chrono")
        let report = try workspace.expectSuccess(["backup", workspace.store, backup, "--json"]).object()
        #expect(Set(report.keys) == ["root", "pages", "bytes", "path"])
        #expect(report["root"] as? Int == head)
        #expect((report["pages"] as? Int ?? 0) > 0)
        let fileBytes = try #require(try FileManager.default.attributesOfItem(atPath: backup)[.size] as? Int)
        #expect(report["bytes"] as? Int == fileBytes)
        #expect(report["path"] as? String == backup)
        #expect(try workspace.expectSuccess(["get", backup, "notes", "a"]).stdout == #"{"title":"Buy milk"}"# + "\n")
        let listed = try workspace.expectSuccess(["list", backup, "notes", "--json"]).stdout
        #expect(listed == (try workspace.expectSuccess(["list", workspace.store, "notes", "--json"]).stdout))
        #expect(try workspace.expectSuccess(["verify", backup, "--json"]).object()["ok"] as? Bool == true)
    }

    @Test func thePlainReportIsOneSentenceNamingTheRootAndTheSizes() throws {
        let workspace = try Workspace.withStore()
        let head = try workspace.put("c", "k", "1")
        let backup = workspace.directory.file("backup.chrono")
        let text = try workspace.expectSuccess(["backup", workspace.store, backup]).stdout
        #expect(text.hasPrefix("Backed up the head, root \(head), to \(backup): "))
        #expect(text.contains(" pages of data in a "))
        #expect(text.split(separator: "\n").count == 1)
    }

    @Test func aBackupOfASnapshotOrAnOlderRootHoldsThatRootsRecords() throws {
        let workspace = try Workspace.withStore()
        let pinned = try workspace.put("c", "a", "1")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "first"])
        try workspace.put("c", "a", "2")
        try workspace.put("c", "b", "3")
        let history = try workspace.expectSuccess(["history", workspace.store, "--json"]).objects()
        let pinnedTime = try #require(history.first { $0["id"] as? Int == pinned }?["time"] as? String)
        let selections = [["--snapshot", "first"], ["--at", String(pinned)], ["--at", pinnedTime]]
        for (index, selection) in selections.enumerated() {
            let backup = workspace.directory.file("backup-\(index).chrono")
            let report = try workspace.expectSuccess(["backup", workspace.store, backup, "--json"] + selection).object()
            #expect(report["root"] as? Int == pinned, "\(selection)")
            #expect(try workspace.expectSuccess(["get", backup, "c", "a"]).stdout == "1\n", "\(selection)")
            try workspace.expectFailure(["get", backup, "c", "b"], exitCode: 1, message: "no key")
        }
        let text = try workspace.expectSuccess(["backup", workspace.store, workspace.directory.file("named.chrono"), "--snapshot", "first"])
        #expect(text.stdout.hasPrefix("Backed up snapshot \"first\", root \(pinned), to "))
    }

    @Test func aDestinationThatExistsIsRefusedAndLeftAlone() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let destination = workspace.directory.file("precious.txt")
        let contents = Data("do not overwrite me\n".utf8)
        try contents.write(to: URL(fileURLWithPath: destination))
        let store = try workspace.storeBytes()
        let files = try workspace.fileNames()
        try workspace.expectFailure(["backup", workspace.store, destination], exitCode: 4, message: "already exists at \(destination)")
        try workspace.expectFailure(["backup", workspace.store, workspace.store], exitCode: 4, message: "already exists")
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == contents)
        #expect(try workspace.storeBytes() == store)
        #expect(try workspace.fileNames() == files, "no partial file is left behind")
    }

    @Test func withHistoryCopiesEveryRootAndTheHead() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1", label: "first")
        try workspace.put("c", "k", "2", label: "second")
        try workspace.expectSuccess(["snapshot", "create", workspace.store, "s"])
        try workspace.expectSuccess(["undo", workspace.store])
        let backup = workspace.directory.file("history.chrono")
        try workspace.expectSuccess(["backup", workspace.store, backup, "--with-history"])
        let labels = try workspace.expectSuccess(["history", backup, "--all-branches", "--json"]).objects().map { $0["label"] as? String }
        #expect(labels == ["second", "first", nil])
        #expect(try workspace.expectSuccess(["get", backup, "c", "k"]).stdout == "1\n")
        try workspace.expectSuccess(["redo", backup])
        #expect(try workspace.expectSuccess(["get", backup, "c", "k"]).stdout == "2\n")
        #expect(try workspace.expectSuccess(["snapshot", "list", backup, "--json"]).objects().count == 1)
        try workspace.expectSuccess(["verify", backup])
    }

    @Test func withHistoryRefusesARootOrSnapshotAndWritesNothing() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let files = try workspace.fileNames()
        try workspace.expectFailure(
            ["backup", workspace.store, workspace.directory.file("backup.chrono"), "--with-history", "--snapshot", "s"],
            exitCode: 2, message: "--with-history copies every root")
        #expect(try workspace.fileNames() == files)
    }

    @Test func aMissingStoreRootSnapshotOrDirectoryWritesNothing() throws {
        let workspace = try Workspace.withStore()
        try workspace.put("c", "k", "1")
        let files = try workspace.fileNames()
        let backup = workspace.directory.file("backup.chrono")
        try workspace.expectFailure(["backup", workspace.directory.file("missing.chrono"), backup], exitCode: 4, message: "no store at")
        try workspace.expectFailure(["backup", workspace.store, backup, "--at", "99"], exitCode: 1, message: "root 99 is not retained")
        try workspace.expectFailure(["backup", workspace.store, backup, "--snapshot", "nope"], exitCode: 1, message: "no snapshot named")
        try workspace.expectFailure(["backup", workspace.store, backup, "--at", "2", "--snapshot", "s"], exitCode: 2, message: "not both")
        try workspace.expectFailure(["backup", workspace.store, backup, "--at", "yesterday"], exitCode: 2, message: "--at must be")
        try workspace.expectFailure(["backup", workspace.store], exitCode: 2, message: "missing DEST")
        try workspace.expectFailure(
            ["backup", workspace.store, workspace.directory.file("no-such-directory/backup.chrono")], exitCode: 4,
            message: "no directory")
        #expect(try workspace.fileNames() == files)
    }

    @Test func ctrlCDuringABackupLeavesEitherNoFileOrACompleteBackup() throws {
        let workspace = try Workspace.withStore()
        let value = #"{"text":"\#(String(repeating: "x", count: 200))"}"#
        let lines = (0..<8).map { batch in
            "[" + (0..<1000).map { #"{"put":{"c":"c","k":"k\#(batch)-\#($0)","v":\#(value)}}"# }.joined(separator: ",") + "]"
        }
        try workspace.expectSuccess(["apply", workspace.store], stdin: lines.joined(separator: "\n"))
        let files = try workspace.fileNames()
        for (index, delay) in [0.0, 0.02, 0.05, 0.1].enumerated() {
            let backup = workspace.directory.file("backup-\(index).chrono")
            let running = try workspace.start(["backup", workspace.store, backup])
            Thread.sleep(forTimeInterval: delay)
            running.interrupt()
            let result = try running.finish()
            if result.exitCode == 0 {
                try workspace.expectSuccess(["verify", backup])
                try FileManager.default.removeItem(atPath: backup)
                try? FileManager.default.removeItem(atPath: backup + ".lock")
            } else {
                #expect(!FileManager.default.fileExists(atPath: backup))
                #expect(result.exitCode == 4 || result.exitCode == 128 + SIGINT, "exit \(result.exitCode): \(result.stderr)")
                if result.exitCode == 4 { #expect(result.stderr == "chrono: interrupted; no backup was written\n") }
            }
            #expect(try workspace.fileNames() == files, "after an interrupt at \(delay) s")
        }
    }
}
