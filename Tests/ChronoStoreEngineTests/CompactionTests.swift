// Compaction: live pages move out of the tail, the file shrinks, history and readers stay intact.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
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
