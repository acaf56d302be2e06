// Compaction: live pages move out of the tail, the file shrinks, history and readers stay intact.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Compaction")
struct CompactionTests {
    private static func load(_ store: Store, keys: [[UInt8]], generator: inout SeededGenerator) throws {
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(150), in: "data") }
        }
    }

    @Test func afterDeletingHalfAndClearingHistoryTheFileShrinksToNearAFreshLoad() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 5)
        let keys = (0..<20_000).map { _ in generator.bytes(24) }
        let store = try Store.create(at: directory.file("compact.chrono"), options: StoreOptions(retention: .lastRoots(10)))
        try Self.load(store, keys: keys, generator: &generator)
        try store.write { transaction in
            for key in keys[..<10_000] { try transaction.delete(key, in: "data") }
        }
        let expected = try contents(of: store)
        try store.clearHistory()
        var progressCalls = 0
        let report = try store.compact { _ in progressCalls += 1 }
        #expect(try contents(of: store) == expected)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0, "\(verification)")
        try store.close()

        let fresh = try Store.create(at: directory.file("fresh.chrono"))
        try fresh.write { transaction in
            for (key, value) in expected["data"]! { try transaction.put(key, value, in: "data") }
        }
        let freshSize = try fresh.pageFile.file.byteCount()
        try fresh.close()
        print("compaction: \(report.byteCountBefore / 1024) KiB -> \(report.byteCountAfter / 1024) KiB, fresh load \(freshSize / 1024) KiB, \(report.pagesMoved) pages moved")
        #expect(report.byteCountAfter < report.byteCountBefore)
        #expect(Double(report.byteCountAfter) <= 1.3 * Double(freshSize))
        let reopened = try Store.open(at: directory.file("compact.chrono"))
        defer { try? reopened.close() }
        #expect(try contents(of: reopened) == expected)
    }

    @Test func compactionKeepsUndoAndAnOpenReadersRoot() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 6)
        let store = try Store.create(at: directory.file("undo.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        let keys = (0..<3_000).map { _ in generator.bytes(24) }
        try Self.load(store, keys: keys, generator: &generator)
        let beforeDeletes = try contents(of: store)
        try store.write { transaction in
            for key in keys[..<2_000] { try transaction.delete(key, in: "data") }
        }
        let afterDeletes = try contents(of: store)
        let reader = try store.beginRead(at: .root(TransactionID(2)))
        try store.compact()
        #expect(try contents(of: reader) == beforeDeletes)
        reader.close()
        #expect(try contents(of: store) == afterDeletes)
        // The compacted root took the head's place: one undo goes back before the deletes.
        try store.undo()
        #expect(try contents(of: store) == beforeDeletes)
        try store.redo()
        #expect(try contents(of: store) == afterDeletes)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0, "\(verification)")
    }
}

@Suite("Compaction and backup regressions")
struct CompactionRegressionTests {
    /// Regression: with too few free pages for the rebuilt trees, compaction grew the file.
    @Test func compactionNeverGrowsTheFile() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 8)
        let store = try Store.create(at: directory.file("grow.chrono"), options: StoreOptions(retention: .lastRoots(1)))
        defer { try? store.close() }
        let keys = (0..<4_000).map { _ in generator.bytes(24) }
        try store.write { transaction in for key in keys { try transaction.put(key, generator.bytes(150), in: "data") } }
        try store.write { transaction in for key in keys.prefix(200) { try transaction.put(key, generator.bytes(150), in: "data") } }
        try store.clearHistory()
        let report = try store.compact()
        #expect(report.byteCountAfter <= report.byteCountBefore)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0)
    }

    /// Regression: in deferred mode the head was pinned as the crash fallback, so compaction
    /// neither replaced it nor freed the tail.
    @Test func compactionShrinksADeferredModeStoreAndKeepsLabelAndTime() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 9)
        let store = try Store.create(
            at: directory.file("deferred.chrono"), options: StoreOptions(durability: .deferred, retention: .lastRoots(1)))
        defer { try? store.close() }
        let keys = (0..<6_000).map { _ in generator.bytes(24) }
        try store.write { transaction in for key in keys { try transaction.put(key, generator.bytes(150), in: "data") } }
        try store.write(label: "Delete most") { transaction in for key in keys.dropFirst(1_000) { try transaction.delete(key, in: "data") } }
        let headBefore = try store.history().first!
        let report = try store.compact()
        #expect(report.byteCountAfter < report.byteCountBefore / 2)
        let headAfter = try store.history().first!
        #expect(headAfter.label == "Delete most")
        #expect(headAfter.timeMilliseconds == headBefore.timeMilliseconds)
        #expect(try store.history(allBranches: true).count == 1)
    }

    /// Regression: restoring a backup with another page size overran page buffers.
    @Test func restoringABackupWithAnotherPageSizeIsRefused() throws {
        let directory = try TemporaryDirectory()
        let large = try Store.create(at: directory.file("large-pages.chrono"), options: StoreOptions(pageSize: 16384))
        try large.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        try large.backup(to: directory.file("large-backup.chrono"))
        try large.close()
        let store = try Store.create(at: directory.file("small-pages.chrono"))
        defer { try? store.close() }
        #expect(throws: StoreError.pageSizeMismatch(stored: 4096, requested: 16384)) {
            try store.restore(fromBackup: directory.file("large-backup.chrono"))
        }
        #expect(try store.read { try $0.count(in: "c") } == 0)
    }

    /// A backup keeps the source's retention, and restores from a read-only file without a lock file.
    @Test func aBackupKeepsRetentionAndRestoresFromAReadOnlyFile() throws {
        let directory = try TemporaryDirectory()
        let source = try Store.create(at: directory.file("source.chrono"), options: StoreOptions(retention: .lastRoots(5)))
        try source.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        try source.backup(to: directory.file("backup.chrono"))
        try source.close()
        chmod(directory.file("backup.chrono"), 0o444)
        let backup = try Store.open(file: PosixFile(path: directory.file("backup.chrono"), create: false, readOnly: true))
        #expect(try backup.snapshot.state.retention == .lastRoots(5))
        let target = try Store.create(at: directory.file("target.chrono"))
        defer { try? target.close() }
        try target.restore(fromBackup: directory.file("backup.chrono"))
        #expect(text(try target.read { try $0.value(forKey: bytes("k"), in: "c") }) == "v")
        #expect(!Platform.fileExists(directory.file("backup.chrono.lock")))
    }
}
