// Backups left behind or taken carelessly: abandoned partial files, plain copies of open stores, the overlay that reads them.
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

@Suite("Restoring from copies")
struct UncleanCopyRestoreTests {
    @Test func restoreFromAPlainCopyOfAStoreThatWasNotClosedWorksAndLeavesTheCopyUnchanged() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-unclean-copy")
        let source = try Store.create(at: directory.file("source.chrono"))
        for round in 0..<3 { try source.write { try $0.put(bytes("k\(round)"), bytes("v\(round)"), in: "c") } }
        // A plain copy taken while the store is open: its newest header slot is not marked verified.
        let copy = directory.file("copy.chrono")
        try RawFile.write(copy, try RawFile.bytes(directory.file("source.chrono")))
        let copyBytes = try RawFile.bytes(copy)
        try source.close()

        let target = try Store.create(at: directory.file("target.chrono"))
        defer { try? target.close() }
        try target.restore(fromBackup: copy)
        #expect(try target.read { try entries($0, "c") }.map { text($0.1) } == ["v0", "v1", "v2"])
        #expect(try RawFile.bytes(copy) == copyBytes, "restoring only reads the backup")
    }
}

@Suite("Overlay file")
struct OverlayFileTests {
    @Test func writesStayInMemoryAndTruncatedBytesReadAsZeros() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-overlay")
        let path = directory.file("base.bin")
        let original = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }
        try RawFile.write(path, original)
        let overlay = try OverlayFile(over: try PosixFile(path: path, create: false, readOnly: true))
        func read(_ offset: UInt64, _ count: Int) throws -> [UInt8] {
            var buffer = [UInt8](repeating: 0xEE, count: count)
            let got = try buffer.withUnsafeMutableBytes { try overlay.read(into: $0, at: offset) }
            return Array(buffer.prefix(got))
        }
        try [UInt8](repeating: 7, count: 5000).withUnsafeBytes { try overlay.write($0, at: 3000) }
        #expect(try read(2990, 20) == Array(original[2990..<3000]) + [UInt8](repeating: 7, count: 10))
        #expect(try read(7990, 20) == [UInt8](repeating: 7, count: 10) + Array(original[8000..<8010]))
        try overlay.truncate(to: 4100)
        #expect(try overlay.byteCount() == 4100)
        try [UInt8(9)].withUnsafeBytes { try overlay.write($0, at: 12_000) }
        #expect(try overlay.byteCount() == 12_001)
        #expect(try read(4090, 20) == [UInt8](repeating: 7, count: 10) + [UInt8](repeating: 0, count: 10))
        #expect(try read(9990, 20) == [UInt8](repeating: 0, count: 20))
        #expect(try read(11_999, 5) == [0, 9])
        #expect(try RawFile.bytes(path) == original, "the file itself never changes")
    }
}
