// Backups, restores and offline replacement on real files.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// A store with several collections, a large value and some history.
private func makeSourceStore(in directory: TemporaryDirectory) throws -> (Store, Contents) {
    let store = try Store.create(at: directory.file("source.chrono"), options: StoreOptions(retention: .limitless))
    var generator = SeededGenerator(seed: 11)
    for round in 0..<5 {
        try store.write(label: "round \(round)") { transaction in
            for index in 0..<400 {
                try transaction.put(bytes("key-\(index)"), generator.bytes(Int.random(in: 10...300, using: &generator)), in: "items")
            }
            try transaction.put(bytes("large"), generator.bytes(200_000), in: "blobs")
            try transaction.put(bytes("round"), bytes("\(round)"), in: "meta")
        }
    }
    return (store, try contents(of: store))
}

@Suite("Backups")
struct BackupTests {
    @Test func aBackupOpensVerifiesAndReadsWithoutTheOriginal() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try makeSourceStore(in: directory)
        var reports: [BackupProgress] = []
        let report = try store.backup(to: directory.file("backup.chrono")) { reports.append($0) }
        let sourceBytes = try store.pageFile.file.byteCount()
        try store.close()
        try FileManager.default.removeItem(atPath: directory.file("source.chrono"))
        let backup = try Store.open(at: directory.file("backup.chrono"))
        defer { try? backup.close() }
        #expect(try contents(of: backup) == expected)
        let verification = try backup.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0)
        #expect(report.byteCount < sourceBytes, "a backup of one root holds only its live pages")
        #expect(reports.last?.pagesDone == reports.last?.pagesTotal)
        #expect(reports.last?.pagesDone == report.pageCount)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.contains(".partial") })
    }

    @Test func aBackupOfASnapshotHoldsThatRootWhileWritesContinue() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try makeSourceStore(in: directory)
        defer { try? store.close() }
        try store.createSnapshot(named: "before")
        var wroteDuringBackup = false
        try store.backup(to: directory.file("snap.chrono"), of: .snapshot("before")) { _ in
            // The backup reads a pinned root: the writer is not blocked and changes do not leak in.
            if !wroteDuringBackup {
                wroteDuringBackup = true
                try store.write { try $0.put(bytes("key-1"), bytes("changed during backup"), in: "items") }
            }
        }
        #expect(wroteDuringBackup)
        let backup = try Store.open(at: directory.file("snap.chrono"))
        defer { try? backup.close() }
        #expect(try contents(of: backup) == expected)
    }

    @Test func aCancelledBackupLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try makeSourceStore(in: directory)
        defer { try? store.close() }
        #expect(throws: CancellationError.self) {
            try store.backup(to: directory.file("cancelled.chrono")) { _ in throw CancellationError() }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["source.chrono", "source.chrono.lock"])
    }

    @Test func aRestoreIsACommitThatCanBeUndoneAndPruned() throws {
        let directory = try TemporaryDirectory()
        let (store, backedUp) = try makeSourceStore(in: directory)
        defer { try? store.close() }
        try store.backup(to: directory.file("backup.chrono"))
        try store.write { transaction in
            try transaction.dropCollection("blobs")
            try transaction.put(bytes("new"), bytes("after backup"), in: "items")
        }
        let changed = try contents(of: store)
        var progressCalls = 0
        try store.restore(fromBackup: directory.file("backup.chrono")) { _ in progressCalls += 1 }
        #expect(try contents(of: store) == backedUp)
        #expect(try store.history().first?.label == "Restore")
        try store.undo()
        #expect(try contents(of: store) == changed)
        try store.redo()
        #expect(try contents(of: store) == backedUp)
        // The restored root has a lineage of its own; pruning the old one frees its pages.
        try store.write { try $0.put(bytes("after"), bytes("restore"), in: "meta") }
        try store.clearHistory()
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        #expect(!Platform.fileExists(directory.file("backup.chrono.lock")))
    }

    @Test func aDamagedBackupIsRefusedAndNothingChanges() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try makeSourceStore(in: directory)
        defer { try? store.close() }
        try store.backup(to: directory.file("backup.chrono"))
        // Damage one byte in the middle of the backup's last page.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: directory.file("backup.chrono")))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 100)
        try handle.write(contentsOf: Data([0xFF]))
        try handle.close()
        let head = try store.snapshot.head.transaction
        #expect {
            try store.restore(fromBackup: directory.file("backup.chrono"))
        } throws: { error in
            if case .backupFailedVerification = error as? StoreError { return true }
            return (error as? StoreError)?.isDamage == true
        }
        #expect(try store.snapshot.head.transaction == head)
        #expect(try contents(of: store) == expected)
    }

    @Test func replacingAStoreOfflineSwapsInTheBackupAndRefusesWhileOpen() throws {
        let directory = try TemporaryDirectory()
        let (store, expected) = try makeSourceStore(in: directory)
        try store.backup(to: directory.file("backup.chrono"))
        try store.write { try $0.put(bytes("lost"), bytes("in disaster"), in: "items") }
        #expect(throws: StoreError.storeInUse(path: directory.file("source.chrono"))) {
            try Store.replaceStore(at: directory.file("source.chrono"), withBackup: directory.file("backup.chrono"))
        }
        try store.close()
        try Store.replaceStore(at: directory.file("source.chrono"), withBackup: directory.file("backup.chrono"))
        let replaced = try Store.open(at: directory.file("source.chrono"))
        defer { try? replaced.close() }
        #expect(try contents(of: replaced) == expected)
    }

    @Test func aDirectoryDestinationKeepsTheNewestBackupsAndRestoresThem() throws {
        let directory = try TemporaryDirectory()
        let (store, _) = try makeSourceStore(in: directory)
        defer { try? store.close() }
        let backups = directory.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        let destination = DirectoryBackupDestination(directory: backups, retention: .last(2))
        var stored: [BackupRecord] = []
        var contentsAtBackup: [Contents] = []
        for round in 0..<3 {
            try store.write { try $0.put(bytes("round"), bytes("backup \(round)"), in: "meta") }
            contentsAtBackup.append(try contents(of: store))
            stored.append(try store.backup(to: destination, name: "daily"))
            Thread.sleep(forTimeInterval: 0.002)
        }
        let listed = try destination.list()
        #expect(listed.map(\.name) == ["daily", "daily"])
        #expect(listed.last?.identifier == stored.last?.identifier)
        try store.write { try $0.put(bytes("round"), bytes("later"), in: "meta") }
        try store.restore(from: destination, listed.last!)
        #expect(try contents(of: store) == contentsAtBackup.last!)
        #expect(throws: StoreError.invalidBackupName("a/b")) { try destination.store(name: "a/b") { nil } }
    }
}

@Suite("Backups with history")
struct HistoryBackupTests {
    @Test func aBackupWithHistoryKeepsEveryRootSnapshotAndBranch() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("source.chrono"), options: StoreOptions(retention: .lastRoots(50)))
        defer { try? store.close() }
        // A history with a branch, a revert, a snapshot, a restore lineage and a large value.
        var generator = SeededGenerator(seed: 21)
        for round in 0..<6 {
            try store.write(label: "round \(round)") { transaction in
                for index in 0..<120 { try transaction.put(bytes("k\(index)"), generator.bytes(Int.random(in: 5...200, using: &generator)), in: "c") }
                if round == 2 { try transaction.put(bytes("large"), generator.bytes(50_000), in: "blobs") }
            }
        }
        try store.createSnapshot(named: "middle")
        try store.undo(steps: 2)
        try store.write(label: "branch") { try $0.put(bytes("branch"), bytes("yes"), in: "c") }
        try store.revert(to: TransactionID(3), label: "revert")
        try store.backup(to: directory.file("one-root.chrono"))
        try store.restore(fromBackup: directory.file("one-root.chrono"))
        try store.write(label: "after restore") { try $0.delete(bytes("k1"), in: "c") }

        let sourceItems = try store.history(allBranches: true)
        var sourceContents: [String: Contents] = [:]
        for item in sourceItems {
            let reader = try store.beginRead(at: .root(item.id))
            sourceContents["\(item.label ?? "")@\(item.timeMilliseconds)"] = try contents(of: reader)
            reader.close()
        }
        try store.backupWithHistory(to: directory.file("history.chrono"))
        let backup = try Store.open(at: directory.file("history.chrono"))
        defer { try? backup.close() }
        let items = try backup.history(allBranches: true)
        #expect(items.map(\.label) == sourceItems.map(\.label))
        #expect(items.map(\.timeMilliseconds) == sourceItems.map(\.timeMilliseconds))
        #expect(items.map(\.isHead) == sourceItems.map(\.isHead))
        #expect(items.map(\.isBranchTip) == sourceItems.map(\.isBranchTip))
        for item in items {
            let reader = try backup.beginRead(at: .root(item.id))
            #expect(try contents(of: reader) == sourceContents["\(item.label ?? "")@\(item.timeMilliseconds)"], "root \(item.label ?? "")")
            reader.close()
        }
        #expect(try backup.snapshots().map(\.name) == ["middle"])
        #expect(try contents(of: backup) == contents(of: store))
        let report = try backup.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        // Undo walks the same line in both.
        try store.undo()
        try backup.undo()
        #expect(try contents(of: backup) == contents(of: store))
        // The copy's lifetime lists are right: dropping all history leaves a sound store.
        try backup.clearHistory()
        let cleared = try backup.verify()
        #expect(cleared.isSound && cleared.leakedPageCount == 0, "\(cleared)")
    }
}

@Suite("Backups of in-memory stores")
struct InMemoryBackupTests {
    /// Regression: an in-memory store put its scratch files in the current directory.
    @Test func anInMemoryStoreBacksUpToADestinationWithoutScratchFilesInTheWorkingDirectory() throws {
        let directory = try TemporaryDirectory()
        let before = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
        let store = try Store.create(in: FaultInjectingFile(name: "memory"))
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let destination = DirectoryBackupDestination(directory: directory.path)
        let record = try store.backup(to: destination, name: "daily")
        try store.write { try $0.put(bytes("k"), bytes("changed"), in: "c") }
        try store.restore(from: destination, record)
        #expect(text(try store.read { try $0.value(forKey: bytes("k"), in: "c") }) == "v")
        let after = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
        #expect(Set(after) == Set(before))
    }
}

@Suite("Byte-level tree copies")
struct TreeCopyTests {
    /// Copied leaves and branches are raw bytes until edited; an edit in the same transaction
    /// turns them into nodes on the same pages.
    @Test func editingACopiedTreeInTheSameTransactionWorks() throws {
        let directory = try TemporaryDirectory()
        let source = try Store.create(at: directory.file("source.chrono"))
        defer { try? source.close() }
        try source.write { transaction in
            for index in 0..<2_000 { try transaction.put(bytes("k\(index)"), bytes("v\(index)"), in: "data") }
        }
        let target = try Store.create(at: directory.file("target.chrono"))
        defer { try? target.close() }
        let reader = try source.beginRead()
        defer { reader.close() }
        let transaction = try target.beginWrite()
        let copier = TreeCopier(source: reader.treeReader, destination: transaction)
        try transaction.replaceContents(withCatalog: try copier.copyCatalog(reader.root.catalog), freshLineage: true)
        try transaction.put(bytes("k5"), bytes("edited"), in: "data")
        try transaction.delete(bytes("k6"), in: "data")
        #expect(text(try transaction.value(forKey: bytes("k5"), in: "data")) == "edited")
        try transaction.commit()
        #expect(try target.read { try $0.count(in: "data") } == 1_999)
        #expect(text(try target.read { try $0.value(forKey: bytes("k1999"), in: "data") }) == "v1999")
        let report = try target.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }
}
