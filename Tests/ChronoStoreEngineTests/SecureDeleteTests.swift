// Secure delete: once the history holding a deleted value is pruned, no byte of it is left on disk.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Secure delete")
struct SecureDeleteTests {
    /// A marker no page would hold by chance, and a value made of it: `pages` pages of it, or a
    /// short inline value when 0.
    static func secret(pages: Int, pageSize: Int = 4096) -> (marker: [UInt8], value: [UInt8]) {
        var random = SystemRandomNumberGenerator()
        let marker = bytes("secret-") + (0..<17).map { _ in UInt8.random(in: 97...122, using: &random) }
        let count = pages == 0 ? 1 : pages * pageSize / marker.count + 1
        return (marker, Array((0..<count).map { _ in marker }.joined()))
    }

    /// Whether the file at `path` (if any) holds `marker` anywhere.
    static func fileHolds(_ path: String, _ marker: [UInt8]) throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.range(of: Data(marker)) != nil
    }

    static func options(_ retention: RetentionPolicy, secureDelete: Bool) -> StoreOptions {
        var options = StoreOptions(retention: retention)
        options.secureDelete = secureDelete
        return options
    }

    @Test(arguments: [0, 3])
    func aDeletedValueLeavesNoByteInTheDataOrLockFileOnceItsHistoryIsCleared(pages: Int) throws {
        let directory = try TemporaryDirectory()
        for secureDelete in [true, false] {
            let path = directory.file("quotes-\(secureDelete).chrono")
            let (marker, value) = Self.secret(pages: pages)
            let store = try Store.create(at: path, options: Self.options(.limitless, secureDelete: secureDelete))
            for index in 0..<20 { try store.write { try $0.put(bytes("q\(index)"), bytes("quote \(index)"), in: "quotes") } }
            try store.write { try $0.put(bytes("private"), value, in: "quotes") }
            for index in 0..<5 { try store.write { try $0.put(bytes("r\(index)"), bytes("later \(index)"), in: "quotes") } }
            try store.write { _ = try $0.delete(bytes("private"), in: "quotes") }
            #expect(try Self.fileHolds(path, marker), "the history still holds the value before it is cleared")
            try store.clearHistory()
            try store.close()
            // Without secure delete the freed pages keep their bytes: the scan can see them.
            #expect(try Self.fileHolds(path, marker) == !secureDelete, "secure delete \(secureDelete)")
            #expect(try !Self.fileHolds(path + ".lock", marker))
            // The flag and the zeroing mark, read as Docs/FileFormat.md lays them out.
            let spec = try SpecReader(path: path)
            #expect(spec.state.flags & 2 == (secureDelete ? 2 : 0))
            #expect((spec.state.zeroedThrough > 0) == secureDelete && spec.state.zeroedThrough < spec.state.transaction)
            let reopened = try Store.open(at: path)
            #expect(try reopened.snapshot.state.secureDelete == secureDelete)
            #expect(try reopened.verify().isSound)
            #expect(try reopened.read { try $0.value(forKey: bytes("q3"), in: "quotes") } == bytes("quote 3"))
            try reopened.close()
        }
    }

    @Test(arguments: [Durability.durable, .deferred])
    func underLastOneAWriteThatFreesTheOldHeadZeroesItsPagesBeforeReturning(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("last.chrono")
        let (marker, value) = Self.secret(pages: 2)
        var options = Self.options(.lastRoots(1), secureDelete: true)
        // Deferred mode too: a secure-delete store syncs every commit, so freed pages are reusable at once.
        options.durability = durability
        let store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        try store.write { try $0.put(bytes("a"), value, in: "c") }
        try store.write { try $0.put(bytes("b"), bytes("other"), in: "c") }
        #expect(try Self.fileHolds(path, marker))
        try store.write { _ = try $0.delete(bytes("a"), in: "c") }
        #expect(try !Self.fileHolds(path, marker))
        #expect(try store.verify().isSound)
    }

    @Test func pagesAReaderMayStillReadAreZeroedByTheFirstCommitAfterItCloses() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("reader.chrono")
        let (marker, value) = Self.secret(pages: 1)
        let store = try Store.create(at: path, options: Self.options(.lastRoots(1), secureDelete: true))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("a"), value, in: "c") }
        let reader = try store.beginRead()
        try store.write { _ = try $0.delete(bytes("a"), in: "c") }
        try store.write { try $0.put(bytes("b"), bytes("1"), in: "c") }
        // The reader still reads the value from its pages.
        #expect(try reader.value(forKey: bytes("a"), in: "c") == value)
        #expect(try Self.fileHolds(path, marker))
        reader.close()
        try store.write { try $0.put(bytes("b"), bytes("2"), in: "c") }
        #expect(try !Self.fileHolds(path, marker))
        #expect(try store.verify().isSound)
    }

    @Test func compactionAndPruningUnderSecureDeleteLeaveASoundStoreAndNoDeletedBytes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("compact.chrono")
        var secrets: [[UInt8]] = []
        let store = try Store.create(at: path, options: Self.options(.lastRoots(3), secureDelete: true))
        for index in 0..<30 {
            let (marker, value) = Self.secret(pages: index % 4)
            secrets.append(marker)
            try store.write { try $0.put(bytes("k\(index % 7)"), value, in: "c") }
        }
        try store.write { transaction in
            for index in 0..<7 { _ = try transaction.delete(bytes("k\(index)"), in: "c") }
        }
        try store.prune()
        try store.compact()
        try store.clearHistory()
        #expect(try store.verify().isSound)
        try store.close()
        for marker in secrets { #expect(try !Self.fileHolds(path, marker)) }
    }

    /// Secure delete packs history too (format version 5): pack entries name their pages, and a
    /// pack page that loses some of its entries to pruning has the rest rewritten elsewhere, so
    /// the freed entries' bytes go with the old page. Before, secure delete turned packing off
    /// (history took whole pages, 4x SQLite's file); with packing but without the rewrite, pruned
    /// values would stay in pack pages.
    @Test func prunedValuesLeaveNoByteInPackedHistoryAndRetainedOnesStillRead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("packed.chrono")
        let seed = UInt64.random(in: 1...UInt64.max)
        print("prunedValuesLeaveNoByteInPackedHistoryAndRetainedOnesStillRead seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        // Secrets of 24 random letters: a delta copies runs of the base page, so each secret is
        // in the file as long as a version holding it is.
        let secrets = (0..<240).map { _ in (0..<24).map { _ in UInt8.random(in: 97...122, using: &generator) } }
        let retained = 40
        let store = try Store.create(at: path, options: Self.options(.lastRoots(retained), secureDelete: true))
        defer { try? store.close() }
        for index in 0..<60 { try store.write { try $0.put(bytes(String(format: "filler-%03d", index)), bytes(String(repeating: "f", count: 40)), in: "c") } }
        var roots: [TransactionID] = []
        for (index, secret) in secrets.enumerated() {
            try store.write { transaction in
                try transaction.put(bytes("key-\(index % 5)"), secret, in: "c")
                try transaction.put(bytes(String(format: "filler-%03d", (index * 7) % 60)), bytes("edit \(index)"), in: "c")
            }
            roots.append(try store.snapshot.head.transaction)
        }
        let state = try store.snapshot.state
        #expect(state.packs.packedPages > 0 && state.packs.packPages > 0, "secure delete packs history")
        #expect(state.packs.namesEntries)
        // Secret i is the value of key-(i % 5) from root i to root i + 4; the retained roots are
        // the last 40, so every secret overwritten before the tail is gone.
        let count = secrets.count
        for index in 0..<(count - retained - 5) {
            #expect(try !Self.fileHolds(path, secrets[index]), "secret \(index) of \(count) survives its history")
        }
        // A retained secret is in the file, though a delta may split one where a few of its
        // letters happen to match the base page, so this shows only that the search finds them.
        let found = try ((count - retained + 1)..<count).filter { try Self.fileHolds(path, secrets[$0]) }.count
        #expect(found >= retained / 2, "\(found) of \(retained - 1) retained secrets found in the file")
        // Retained roots deep enough to be packed read their own secrets.
        for index in stride(from: count - retained + 1, to: count - 8, by: 3) {
            let reader = try store.beginRead(at: .root(roots[index]))
            #expect(try reader.value(forKey: bytes("key-\(index % 5)"), in: "c") == secrets[index])
            reader.close()
        }
        let report = try store.verify()
        #expect(report.isSound, "\(report.problems)")
        // The spec reader reads the named entries as Docs/FileFormat.md lays them out.
        let spec = try SpecReader(path: path)
        #expect(spec.state.flags & 8 == 8)
        #expect(try spec.packSummary().packedPages == state.packs.packedPages)
        #expect(try spec.rebuildEveryPackedPage().count == Int(state.packs.packedPages))
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// Zeroing skips pages that this handle zeroed before and that still read as zeros (a
    /// commit's candidates are mostly free pages it took and left over, zeroed by the previous
    /// pass): of a list of such pages and one that holds bytes, it writes only the one (counted
    /// on an in-memory file, which has no memory map: the pages are read to check them). Pages
    /// it is not told it zeroed are written even when they read as zeros (after a failed sync
    /// the system's copy may read as zeros while the disk holds the old bytes; found by review).
    @Test func zeroingWritesOnlyPagesThatStillHoldBytes() throws {
        let file = FaultInjectingFile(name: "zeros")
        let (_, value) = Self.secret(pages: 1)
        let store = try Store.create(in: file, options: Self.options(.lastRoots(1), secureDelete: true))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("a"), value, in: "c") }
        try store.write { _ = try $0.delete(bytes("a"), in: "c") }
        let pageCount = try store.snapshot.state.pageCount
        let head = try store.snapshot.state.head.page
        #expect(!store.pageFile.holdsOnlyZeros(head, pageCount: pageCount))
        var zeroed: [PageID] = []
        for number in 1..<pageCount where store.pageFile.holdsOnlyZeros(PageID(number), pageCount: pageCount) {
            zeroed.append(PageID(number))
        }
        #expect(zeroed.count >= 2, "the freed pages of the deleted value read as zeros: \(zeroed)")
        let writes = file.writeCount
        let now = try store.overwriteFreedPages(zeroed + [head], pageCount: pageCount, knownZero: Set(zeroed + [head]))
        #expect(file.writeCount == writes + 1, "only the page that held bytes")
        #expect(store.pageFile.holdsOnlyZeros(head, pageCount: pageCount))
        #expect(now == Set(zeroed + [head]))
        // Not known to be this handle's zeros: written all the same.
        let before = file.writeCount
        try store.overwriteFreedPages(zeroed, pageCount: pageCount)
        #expect(file.writeCount > before)
    }
}
