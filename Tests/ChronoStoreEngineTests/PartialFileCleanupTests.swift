// Partial files an interrupted backup leaves behind are removed by the next backup to the same place.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Partial file cleanup")
struct PartialFileCleanupTests {
    @Test func nextBackupRemovesAbandonedPartialsButKeepsOnesStillOpen() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-partials")
        let store = try Store.create(at: directory.file("source.chrono"))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let backupPath = directory.file("backup.chrono")
        // A backup killed part way: a partial store whose lock file names no live process.
        let abandoned = backupPath + ".partial-17"
        try Store.create(at: abandoned).close()
        #expect(RawFile.exists(abandoned) && RawFile.exists(abandoned + ".lock"))
        // A backup still running (here: a store this process holds open).
        let running = backupPath + ".partial-42"
        let open = try Store.create(at: running)
        defer { try? open.close() }
        // A partial without a lock file cannot be told from one being copied: it stays.
        let unlocked = backupPath + ".partial-99"
        try RawFile.write(unlocked, [1, 2, 3])

        try store.backup(to: backupPath)
        #expect(!RawFile.exists(abandoned) && !RawFile.exists(abandoned + ".lock"))
        #expect(RawFile.exists(running) && RawFile.exists(running + ".lock"))
        #expect(RawFile.exists(unlocked))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["backup.chrono", "backup.chrono.partial-42", "backup.chrono.partial-42.lock",
            "backup.chrono.partial-99", "source.chrono", "source.chrono.lock"])
    }
}
