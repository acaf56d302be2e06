// Processes sharing one store through several names, replacement, concurrent creation, reboots.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// A helper process whose standard input stays open until the test closes it.
private struct InteractiveHelper {
    let process: Process
    let input: Pipe
    let output: Pipe
    let errors: Pipe

    static func start(_ arguments: [String]) throws -> InteractiveHelper {
        let process = Process()
        process.executableURL = try TestHelperProcess.executable()
        process.arguments = arguments
        let helper = InteractiveHelper(process: process, input: Pipe(), output: Pipe(), errors: Pipe())
        process.standardInput = helper.input
        process.standardOutput = helper.output
        process.standardError = helper.errors
        try process.run()
        return helper
    }

    /// Reads output lines until one equals `line`; returns the lines before it.
    func lines(until line: String) -> [String] {
        var text = ""
        while !text.split(separator: "\n").contains(Substring(line)) {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        return text.split(separator: "\n").map(String.init).prefix { $0 != line }.map { $0 }
    }

    /// Closes standard input and waits; returns the exit status and standard error.
    func finish() -> (status: Int32, errors: String) {
        try? input.fileHandleForWriting.close()
        let errors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, errors)
    }
}

/// Writes `value` into the lock file's word at `offset` (the map and the file share pages).
private func pokeLockFile(_ path: String, offset: UInt64, value: UInt64) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: path + ".lock"))
    defer { try? handle.close() }
    try handle.seek(toOffset: offset)
    var word = value
    handle.write(Data(bytes: &word, count: 8))
}

private func lockFileWord(_ path: String, offset: Int) throws -> UInt64 {
    let data = try Data(contentsOf: URL(fileURLWithPath: path + ".lock"))
    return data[offset..<(offset + 8)].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
}

@Suite("Processes sharing a store")
struct SharedStoreTests {
    /// Every "write" helper stores the count it saw; writers that truly exclude each other see
    /// every count from 0 to n − 1 exactly once.
    private func expectSerialCounts(_ path: String, total: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try Store.open(at: path)
        defer { try? store.close() }
        let reader = try store.beginRead()
        defer { reader.close() }
        let seen = try entries(reader, "shared").compactMap { text($0.1).flatMap { Int($0) } }.sorted()
        #expect(seen == Array(0..<total), "writers overlapped: \(seen.count) of \(total) commits kept", sourceLocation: sourceLocation)
        #expect(try store.verify().problems == [], sourceLocation: sourceLocation)
    }

    @Test func writersThroughAHardLinkAndASymlinkInOtherFoldersExcludeEachOther() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-names")
        for folder in ["a", "b", "c"] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
        }
        let original = directory.file("a/store.chrono")
        let hardLink = directory.file("b/linked.chrono")
        let symbolicLink = directory.file("c/pointer.chrono")
        try Store.create(at: original).close()
        try FileManager.default.linkItem(atPath: original, toPath: hardLink)
        try FileManager.default.createSymbolicLink(atPath: symbolicLink, withDestinationPath: original)

        try TestHelperProcess.runAll([
            ["write", original, "a", "60"], ["write", hardLink, "b", "60"], ["write", symbolicLink, "c", "60"],
        ])
        try expectSerialCounts(original, total: 180)
        // Every name reads the same store.
        for name in [hardLink, symbolicLink] {
            let store = try Store.open(at: name, readOnly: true)
            #expect(try store.read { try $0.count(in: "shared") } == 180)
            try store.close()
        }
    }

    /// Whether two handles of one store in one process exclude each other through the data
    /// file's locks: open-file-description locks on Linux; Darwin's are process-owned, and such
    /// handles are not supported there (Docs/Durability.md, "Darwin locks").
    static let handlesInOneProcessExclude: Bool = {
        #if canImport(Darwin)
            false
        #else
            true
        #endif
    }()

    /// A new store opened through two names (a hard link): its path and the two handles.
    private static func openThroughTwoNames(_ directory: TemporaryDirectory) throws -> (path: String, first: Store, second: Store) {
        let original = directory.file("store.chrono")
        let hardLink = directory.file("other-name.chrono")
        try Store.create(at: original).close()
        try FileManager.default.linkItem(atPath: original, toPath: hardLink)
        return (original, try Store.open(at: original), try Store.open(at: hardLink))
    }

    @Test(.enabled(if: handlesInOneProcessExclude)) func twoHandlesThroughAHardLinkInOneProcessTakeTurnsAndSeeEachOther() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-names")
        let (original, first, second) = try Self.openThroughTwoNames(directory)
        for index in 0..<20 {
            for (name, store) in [("first", first), ("second", second)] {
                try store.write { transaction in
                    let seen = try transaction.count(in: "shared")
                    try transaction.put(bytes("\(name)-\(index)"), bytes("\(seen)"), in: "shared")
                }
            }
        }
        try first.close()
        try second.close()
        try expectSerialCounts(original, total: 40)
    }

    @Test func aHandleWhoseFileWasReplacedRefusesToCommitAndReopeningReadsTheNewFile() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-replace")
        let path = directory.file("store.chrono")
        let other = directory.file("other.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("old"), bytes("1"), in: "items") }
        let replacement = try Store.create(at: other)
        try replacement.write { try $0.put(bytes("new"), bytes("2"), in: "items") }
        try replacement.close()
        // Another program renames a store over the path while this handle has it open.
        #expect(rename(other, path) == 0)

        #expect(throws: StoreError.storeReplaced(path: path)) {
            try store.write { try $0.put(bytes("lost?"), bytes("3"), in: "items") }
        }
        try store.close()
        let reopened = try Store.open(at: path)
        #expect(try reopened.read { try $0.value(forKey: bytes("new"), in: "items") } == bytes("2"))
        #expect(try reopened.read { try $0.value(forKey: bytes("lost?"), in: "items") } == nil)
        try reopened.close()
    }

    @Test func replacingWhileAnotherProcessOpensAndCommitsNeverSplitsTheStore() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-replace")
        let path = directory.file("store.chrono")
        let backupPath = directory.file("backup.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("from-backup"), bytes("1"), in: "marker") }
        _ = try store.backup(to: backupPath)
        try store.close()

        let helpers = try ["p", "q"].map { try TestHelperProcess.start(["cycle", path, $0, "60"]) }
        var replaced = 0
        var refused = 0
        while helpers.contains(where: \.isRunning) {
            do {
                try Store.replaceStore(at: path, withBackup: backupPath)
                replaced += 1
            } catch StoreError.storeInUse {
                refused += 1
            }
        }
        var committed = 0
        for helper in helpers {
            let (status, output, errors) = helper.finish()
            #expect(status == 0, "helper failed: \(errors)")
            #expect(!output.contains("violation"), "\(output)")
            committed += output.split(separator: "\n").filter { $0.hasPrefix("committed") }.count
        }
        print("replace race: \(replaced) replacements, \(refused) refused while open, \(committed) commits")
        #expect(committed > 0)
        let final = try Store.open(at: path)
        #expect(try final.verify().problems == [])
        try final.close()
    }

    @Test func fourProcessesOpeningOneMissingStoreAtOnceAllSucceed() throws {
        let rounds = Environment.soakEnabled ? 200 : 50
        for round in 0..<rounds {
            let directory = try TemporaryDirectory(prefix: "chrono-create")
            let path = directory.file("new.chrono")
            let start = Int(Date().timeIntervalSince1970 * 1000) + 150
            try TestHelperProcess.runAll((0..<4).map { _ in ["create-open", path, "\(start)"] })
            let store = try Store.open(at: path)
            #expect(try store.read { try $0.count(in: "shared") } == 4, "round \(round)")
            #expect(try store.verify().problems == [], "round \(round)")
            try store.close()
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(leftovers == ["new.chrono", "new.chrono.lock"], "round \(round)")
        }
    }

    @Test func openingNeverWaitsForAWriterThatIsStoppedMidTransaction() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-stopped")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("before"), bytes("1"), in: "shared") }
        try store.close()

        let helper = try InteractiveHelper.start(["hold-write", path])
        _ = helper.lines(until: "ready")
        kill(helper.process.processIdentifier, SIGSTOP)
        // Both kinds of open return at once with the last finished commit.
        let reader = try Store.open(at: path, readOnly: true)
        #expect(try reader.read { try $0.count(in: "shared") } == 1)
        let writerToBe = try Store.open(at: path)
        #expect(try writerToBe.read { try $0.count(in: "shared") } == 1)
        kill(helper.process.processIdentifier, SIGCONT)
        let (status, errors) = helper.finish()
        #expect(status == 0, "\(errors)")
        // Once the writer finished, both see its commit, and the second can write.
        #expect(try reader.read { try $0.count(in: "shared") } == 2)
        try writerToBe.write { try $0.put(bytes("after"), bytes("3"), in: "shared") }
        #expect(try writerToBe.read { try $0.count(in: "shared") } == 3)
        try reader.close()
        try writerToBe.close()
    }

    @Test func aKilledReaderPinsNothingAndStaleFormatOneSlotsAreIgnored() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-pins")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(2)))
        try store.write { try $0.put(bytes("k"), bytes("0"), in: "shared") }
        // A reader slot naming this (live) process and root 1 that no handle holds, as left by a
        // crash before a reboot or by a process whose id was later reused: it must pin nothing.
        let staleSlot = UInt64(64 + 16 * 7)
        try pokeLockFile(path, offset: staleSlot, value: UInt64(getpid()))
        try pokeLockFile(path, offset: staleSlot + 8, value: 1)

        let helper = try InteractiveHelper.start(["pin", path])
        let pinned = try #require(helper.lines(until: "ready").first.flatMap { UInt64($0) })
        for index in 1...20 { try store.write { try $0.put(bytes("k"), bytes("\(index)"), in: "shared") } }
        // The live reader in the other process keeps its root retained and readable.
        #expect(try store.beginRead(at: .root(TransactionID(pinned))).value(forKey: bytes("k"), in: "shared") == bytes("0"))
        kill(helper.process.processIdentifier, SIGKILL)
        _ = helper.finish()
        for index in 21...40 { try store.write { try $0.put(bytes("k"), bytes("\(index)"), in: "shared") } }
        #expect(try store.history().count <= 3, "roots pinned by a dead process or a stale slot were kept")
        #expect(try store.verify().problems == [])
        try store.close()
    }

    @Test func aReaderThroughAnotherNameKeepsItsRootWhileAWriterPrunes() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-pins")
        try FileManager.default.createDirectory(atPath: directory.file("elsewhere"), withIntermediateDirectories: true)
        let path = directory.file("store.chrono")
        let hardLink = directory.file("elsewhere/linked.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(2)))
        try store.write { try $0.put(bytes("k"), bytes("0"), in: "shared") }
        try store.close()
        try FileManager.default.linkItem(atPath: path, toPath: hardLink)

        let helper = try InteractiveHelper.start(["pin", hardLink])
        let pinned = try #require(helper.lines(until: "ready").first.flatMap { UInt64($0) })
        let writer = try Store.open(at: path)
        for index in 1...30 { try writer.write { try $0.put(bytes("k"), bytes("\(index)"), in: "shared") } }
        let old = try writer.beginRead(at: .root(TransactionID(pinned)))
        #expect(try old.value(forKey: bytes("k"), in: "shared") == bytes("0"))
        old.close()
        #expect(try writer.verify().problems == [])
        let (status, errors) = helper.finish()
        #expect(status == 0, "\(errors)")
        try writer.close()
    }

    @Test func transactionIdsNeverRepeatAfterARebootWhoeverOpensFirst() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-reboot")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        for index in 0..<5 { try store.write { try $0.put(bytes("k\(index)"), bytes("v"), in: "shared") } }
        let before = try store.snapshot.transaction.rawValue
        try store.close()
        // The lock file says it was last used in another boot of the machine.
        try pokeLockFile(path, offset: UInt64(CoordinationFile.bootOffset), value: 0x1234_5678)

        let first = try Store.open(at: path)
        let second = try Store.open(at: path)
        let (_, id) = try second.write { try $0.put(bytes("after"), bytes("v"), in: "shared") }
        #expect(try #require(id).rawValue > before + Store.lostIdGap, "ids lost in a crash before the reboot may be reused")
        #expect(try lockFileWord(path, offset: CoordinationFile.transactionFloorOffset) > before + Store.lostIdGap)
        try first.close()
        try second.close()
    }

    @Test func aCommitWhoseSyncIsNotKnownFinishedIsNotAdoptedByOtherProcesses() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-pending")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("first"), bytes("1"), in: "shared") }
        try store.write { try $0.put(bytes("second"), bytes("2"), in: "shared") }
        let synced = try lockFileWord(path, offset: CoordinationFile.syncedSequenceOffset)
        #expect(synced > 0)
        // As if the newest commit's writer were still in its sync: other openers use the one before.
        try pokeLockFile(path, offset: UInt64(CoordinationFile.syncedSequenceOffset), value: synced - 1)
        let writer = try store.beginWrite()  // holds the writer lock, as a syncing writer does
        let reader = try Store.open(at: path, readOnly: true)
        #expect(try reader.read { try $0.value(forKey: bytes("second"), in: "shared") } == nil)
        #expect(try reader.read { try $0.value(forKey: bytes("first"), in: "shared") } == bytes("1"))
        writer.abort()
        try pokeLockFile(path, offset: UInt64(CoordinationFile.syncedSequenceOffset), value: synced)
        try pokeLockFile(path, offset: UInt64(CoordinationFile.counterOffset), value: 1_000_000)
        #expect(try reader.read { try $0.value(forKey: bytes("second"), in: "shared") } == bytes("2"))
        try reader.close()
        try store.close()
    }

    @Test func aFailedSyncInOneHandleLatchesEveryOtherHandleOfTheStore() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-latch")
        let path = directory.file("store.chrono")
        let first = try Store.create(at: path)
        let second = try Store.open(at: path)
        try second.write { try $0.put(bytes("ok"), bytes("1"), in: "shared") }
        // What a failed fdatasync in `first` records for everyone sharing the store.
        first.coordination?.recordSyncFailure()
        #expect(throws: StoreError.self) { try second.write { try $0.put(bytes("no"), bytes("2"), in: "shared") } }
        do {
            _ = try second.beginWrite()
            Issue.record("a handle kept writing after another handle's sync failed")
        } catch StoreError.writesDisabledAfterSyncFailure {
        }
        // A store opened afterwards (after the failing process is gone) writes again.
        try? first.close()
        try? second.close()
        let reopened = try Store.open(at: path)
        try reopened.write { try $0.put(bytes("again"), bytes("3"), in: "shared") }
        try reopened.close()
    }

    @Test func aLockFileThatCannotBeWrittenIsATypedErrorAndReadOnlyOpensStillRead() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
        let directory = try TemporaryDirectory(prefix: "chrono-full")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "shared") }
        try store.close()
        try FileManager.default.removeItem(atPath: path + ".lock")
        // Every write to the new lock file fails with ENOSPC, as on a full disk.
        try FileManager.default.createSymbolicLink(atPath: path + ".lock", withDestinationPath: "/dev/full")
        do {
            _ = try Store.open(at: path)
            Issue.record("opened with a lock file that cannot be written")
        } catch StoreError.io(let error) {
            #expect(error.code == ENOSPC || error.code == EIO || error.code == EINVAL, "\(error)")
        }
        try FileManager.default.removeItem(atPath: path + ".lock")
        let reader = try Store.open(at: path, readOnly: true)
        #expect(try reader.read { try $0.value(forKey: bytes("k"), in: "shared") } == bytes("v"))
        #expect(try reader.verify().problems == [])
        try reader.close()
    }

    @Test func aReadOnlyOpenCreatesNothingWritesNothingAndRefusesWrites() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-readonly")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "shared") }
        try store.close()
        try FileManager.default.removeItem(atPath: path + ".lock")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let image = try Data(contentsOf: URL(fileURLWithPath: path))

        let reader = try Store.open(at: path, readOnly: true)
        #expect(try reader.read { try $0.value(forKey: bytes("k"), in: "shared") } == bytes("v"))
        #expect(try reader.history().count == 2)
        #expect(try reader.verify().problems == [])
        #expect(throws: StoreError.readOnlyStore(path: path)) { _ = try reader.beginWrite() }
        #expect(throws: StoreError.readOnlyStore(path: path)) { try reader.synchronize() }
        try reader.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["store.chrono"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == image)
    }

    /// The typed API begins its transactions without a thread hop when the writer is free
    /// (`beginWriteWithoutWaiting`). It must take nothing and return nil whenever it would have
    /// waited: another transaction of this handle is open, or another handle (here a second name
    /// of the file, whose lock file `flock` conflicts as another process's would) holds the
    /// writer; and the waiting begin must still get the writer afterwards.
    @Test(.enabled(if: handlesInOneProcessExclude)) func beginningWithoutWaitingTakesTheWriterOnlyWhenItIsFree() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-nowait")
        let (_, first, second) = try Self.openThroughTwoNames(directory)
        defer {
            try? first.close()
            try? second.close()
        }
        // Free: it begins, and commits like any transaction.
        let free = try #require(try first.beginWriteWithoutWaiting())
        try free.put(bytes("a"), bytes("1"), in: "items")
        // This handle's own writer is taken: no second transaction, nothing taken.
        #expect(try first.beginWriteWithoutWaiting() == nil)
        // Another name's writer would wait for this one's lock on the data file (each name has
        // a lock file of its own, so their flocks never meet): nil as well.
        #expect(try second.beginWriteWithoutWaiting() == nil)
        try free.commit()
        // Committed and synced, but the other name's lock file cannot say so: the writer taking
        // over syncs first, which a begin that must not wait leaves to one that may.
        #expect(try second.beginWriteWithoutWaiting() == nil)
        try second.write { try $0.put(bytes("b"), bytes("2"), in: "items") }
        // After its own durable commit, the other handle begins without waiting.
        let other = try #require(try second.beginWriteWithoutWaiting())
        #expect(text(try other.value(forKey: bytes("a"), in: "items")) == "1")
        #expect(try first.beginWriteWithoutWaiting() == nil)
        other.abort()
        // A refused attempt left nothing held: the waiting begin and a non-waiting one both work.
        try first.write { try $0.put(bytes("c"), bytes("3"), in: "items") }
        let last = try #require(try first.beginWriteWithoutWaiting())
        #expect(try last.count(in: "items") == 3)
        last.abort()
        let (count, _) = try second.write { try $0.count(in: "items") }
        #expect(count == 3)
    }

    /// A begin that must not wait must not sync either: when another handle left its commit
    /// unsynced (deferred mode), the writer that takes over syncs it first, and that sync belongs
    /// on a thread that may wait. The non-waiting begin gives everything back instead; the
    /// waiting one syncs and begins, and after it the non-waiting one begins again.
    @Test func beginningWithoutWaitingNeverSyncsAnotherHandlesCommit() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-nowait-sync")
        let path = directory.file("store.chrono")
        try Store.create(at: path).close()
        let deferred = try Store.open(at: path, options: StoreOptions(durability: .deferred))
        let durable = try Store.open(at: path)
        defer {
            try? deferred.close()
            try? durable.close()
        }
        try deferred.write { try $0.put(bytes("a"), bytes("1"), in: "items") }
        #expect(try durable.beginWriteWithoutWaiting() == nil)
        // Nothing was kept: the waiting begin takes the writer, syncs the deferred commit and reads it.
        let (seen, _) = try durable.write { try $0.value(forKey: bytes("a"), in: "items") }
        #expect(text(try #require(seen)) == "1")
        let next = try #require(try durable.beginWriteWithoutWaiting())
        #expect(try next.count(in: "items") == 1)
        next.abort()
    }

}
