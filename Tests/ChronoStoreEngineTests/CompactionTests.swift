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

    /// Compaction copies entries from the old leaves as bytes: every new leaf is exactly the page
    /// the decoded build lays out for the same entries (full pages, keys in order), large values
    /// beyond the threshold move and read back, and the stored contents are unchanged.
    @Test func compactionLaysOutTheSameFullLeavesAsTheDecodedBuild() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 9)
        let store = try Store.create(at: directory.file("bytes.chrono"), options: StoreOptions(retention: .lastRoots(1)))
        defer { try? store.close() }
        let keys = (0..<6_000).map { _ in generator.bytes(Int.random(in: 4...40, using: &generator)) }
        try store.write { transaction in
            for (index, key) in keys.enumerated() {
                // Every 500th value is large (overflow pages), the rest of varied sizes.
                let value = index % 500 == 0 ? generator.bytes(20_000) : generator.bytes(Int.random(in: 0...300, using: &generator))
                try transaction.put(key, value, in: "data")
            }
        }
        try store.write { transaction in
            for key in keys.enumerated().filter({ $0.offset % 3 != 0 }).map(\.element) { try transaction.delete(key, in: "data") }
        }
        let expected = try contents(of: store)
        let report = try store.compact()
        #expect(report.pagesMoved > 0)
        #expect(try contents(of: store) == expected)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0, "\(verification)")
        // The leaves, in order, against the decoded build of the same entries.
        try store.read { reader in
            let root = try #require(try reader.collectionEntry(named: "data")).root
            var leaves: [PageBuffer] = []
            func walk(_ reference: PageReference) throws {
                switch try reader.treeReader.node(reference) {
                case .leafPage(let view): leaves.append(view.page)
                case .branchPage(let view): for index in 0...view.keyCount { try walk(view.child(at: index)) }
                default: Issue.record("a committed tree holds decoded nodes")
                }
            }
            try walk(root)
            var entries: [([UInt8], LeafValue)] = []
            for page in leaves {
                let view = LeafView(page: page)
                for index in 0..<view.count { entries.append((Array(view.key(at: index)), view.value(at: index))) }
            }
            #expect(entries.count == expected["data"]!.count)
            var expectedLeaves: [LeafNode] = []
            var node = LeafNode()
            for (key, value) in entries {
                if !node.keys.isEmpty, node.byteCount + NodeLayout.leafEntryByteCount(key: key, value: value) > store.pageSize {
                    expectedLeaves.append(node)
                    node = LeafNode()
                }
                node.insert(key: key, value: value, at: node.keys.count)
            }
            expectedLeaves.append(node)
            #expect(leaves.count == expectedLeaves.count)
            for (page, node) in zip(leaves, expectedLeaves) {
                let laidOut = PageBuffer(pageSize: store.pageSize)
                NodeLayout.encode(node, into: laidOut)
                let body = PageHeader.byteCount..<store.pageSize
                #expect(Array(page.readOnly[body]) == Array(laidOut.readOnly[body]))
            }
        }
    }

    /// Loads `keys` (then whatever `grow` writes), deletes every other key, compacts, checks the
    /// records and the store survived it; returns the report and the pages in use after it.
    private static func deleteHalfAndCompact(
        _ name: String, seed: UInt64, dirtyPageLimit: Int = 65_536, grow: (Store, [[UInt8]], inout SeededGenerator) throws -> Void
    ) throws -> (report: CompactionReport, inUse: UInt64, pageSize: Int) {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: seed)
        let options = StoreOptions(retention: .lastRoots(1), dirtyPageLimit: dirtyPageLimit)
        let store = try Store.create(at: directory.file(name), options: options)
        defer { try? store.close() }
        let keys = (0..<20_000).map { _ in generator.bytes(24) }
        try load(store, keys: keys, generator: &generator)
        try grow(store, keys, &generator)
        try store.write { transaction in
            for key in keys.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) { try transaction.delete(key, in: "data") }
        }
        let expected = try contents(of: store)
        let report = try store.compact()
        let state = try store.snapshot.state
        let inUse = state.pageCount - 1 - state.freePageCount
        print("\(name): \(report.byteCountBefore / 1024) KiB -> \(report.byteCountAfter / 1024) KiB, \(inUse) pages in use")
        #expect(try contents(of: store) == expected)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0, "\(verification)")
        return (report, inUse, store.pageSize)
    }

    /// When the live tree is spread over the whole file (rewritten by a large transaction, then
    /// half deleted), one rewrite can only take the free pages between the old tree's pages, and
    /// the file stays about three times the pages in use; compaction then takes a second pass
    /// into the space the first one freed.
    @Test func aTreeSpreadOverTheFileIsCompactedInASecondPass() throws {
        let (report, inUse, pageSize) = try Self.deleteHalfAndCompact("spread.chrono", seed: 11) { store, keys, generator in
            try Self.load(store, keys: keys, generator: &generator)
        }
        #expect(report.byteCountAfter <= UInt64(Double(inUse) * 1.6) * UInt64(pageSize), "\(report), \(inUse) pages in use")
    }

    /// Regression: the second pass rebuilt every collection tree again, which needs free pages
    /// for the whole tree; a store whose first pass left a dense tree among free pages (the quick
    /// benchmark's: loaded, batches of new keys, half deleted) has fewer, so the pass grew the
    /// file and was dropped, leaving 31 % of the file free (16.7 MB for 11.5 MB in use). The second
    /// pass now moves only the pages beyond the threshold, as it does for the engine's trees.
    /// Large values among the records move too, and with a dirty limit of 64 pages both passes
    /// write finished leaves out early.
    @Test func theSecondPassMovesTheTailOfADenseTreeInsteadOfRebuildingIt() throws {
        let (report, inUse, pageSize) = try Self.deleteHalfAndCompact("dense.chrono", seed: 12, dirtyPageLimit: 64) {
            store, _, generator in
            for batch in 0..<10 {
                try Self.load(store, keys: (0..<1_000).map { _ in generator.bytes(24) }, generator: &generator)
                try store.write { transaction in
                    for index in 0..<3 { try transaction.put(bytes("large-\(batch)-\(index)"), generator.bytes(20_000), in: "data") }
                }
            }
        }
        #expect(report.byteCountAfter <= (inUse + inUse / 8 + 2) * UInt64(pageSize), "\(report), \(inUse) pages in use")
    }

    /// A compaction whose new tree is larger than the dirty-page limit writes finished leaves out
    /// early, like any large transaction, and keeps every record; the store verifies and reopens.
    @Test func aCompactionLargerThanTheDirtyLimitSpillsAndKeepsEveryRecord() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("spill.chrono")
        var generator = SeededGenerator(seed: 10)
        let options = StoreOptions(retention: .lastRoots(1), dirtyPageLimit: 64)
        let store = try Store.create(at: path, options: options)
        let keys = (0..<8_000).map { _ in generator.bytes(24) }
        try Self.load(store, keys: keys, generator: &generator)
        try store.write { transaction in
            for key in keys[..<4_000] { try transaction.delete(key, in: "data") }
        }
        let expected = try contents(of: store)
        let report = try store.compact()
        #expect(report.pagesMoved > 64, "the rebuilt tree exceeds the dirty limit")
        #expect(report.byteCountAfter < report.byteCountBefore)
        #expect(try contents(of: store) == expected)
        let verification = try store.verify()
        #expect(verification.isSound && verification.leakedPageCount == 0, "\(verification)")
        try store.close()
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        #expect(try contents(of: reopened) == expected)
    }

    /// A collection tree whose leaves hold keys out of order (a damaged file that still passes each
    /// page's checksum) makes compaction fail with an error naming the leaf; nothing changes.
    @Test func compactionOfLeavesOutOfOrderIsAnErrorNamingTheLeaf() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("order.chrono")
        var store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(1)))
        try store.write { transaction in
            for index in 0..<2_000 { try transaction.put(bytes(String(format: "k%05d", index)), [UInt8](repeating: 1, count: 60), in: "data") }
        }
        let pageSize = store.pageSize
        // The first key of the second leaf becomes smaller than every key of the first leaf.
        let before = try contents(of: store)
        let second: PageID = try store.read { reader in
            let root = try #require(try reader.collectionEntry(named: "data")).root
            guard case .branchPage(let view) = try reader.treeReader.node(root) else { throw StoreError.transactionFailed }
            return view.child(at: 1).page
        }
        try store.close()
        try PageCrafting.edit(path, page: second, pageSize: pageSize) { bytes in
            let offset = Int(bytes.loadLittleEndian(at: NodeLayout.leafOffsetsStart, as: UInt16.self))
            bytes.storeLittleEndian(UInt8(ascii: "a"), at: offset + NodeLayout.leafEntryHeaderByteCount)
        }
        store = try Store.open(at: path, options: StoreOptions(cacheByteCount: 0, retention: .lastRoots(1)))
        defer { try? store.close() }
        let error = #expect(throws: StoreError.self) { try store.compact() }
        if case .malformedPage(let page, _)? = error { #expect(page == second) } else { Issue.record("expected malformedPage, got \(String(describing: error))") }
        #expect(before["data"]?.count == 2_000)
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
    /// Regression (found by review): with the head pinned (a reader, a snapshot), compaction's
    /// commit adds a root instead of replacing the head, and retention then prunes the oldest
    /// root; freeing its packed pages read their entries' sizes from the pack pages as the
    /// index names them, which compaction had just copied (not on disk yet): a damage error.
    @Test(arguments: [false, true])
    func compactionWithAPinnedHeadPrunesPackedHistoryInTheSameCommit(secureDelete: Bool) throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 0x5EED_0045)
        print("CompactionRegressionTests packed pinned seed: \(0x5EED_0045)")
        var options = StoreOptions(retention: .lastRoots(8))
        options.packing = HistoryPacking(window: 2, batchRoots: 1, leafChainLimit: 4, branchChainLimit: 4)
        options.secureDelete = secureDelete
        let store = try Store.create(at: directory.file("packed-\(secureDelete).chrono"), options: options)
        defer { try? store.close() }
        let filler = (0..<2_000).map { _ in generator.bytes(24) }
        try store.write { transaction in
            for key in filler { try transaction.put(key, generator.bytes(100), in: "filler") }
        }
        for round in 0..<30 {
            try store.write { transaction in
                for key in 0..<5 { try transaction.put(bytes("k\((round * 3 + key) % 40)"), generator.bytes(200), in: "history") }
            }
        }
        // Low free pages, so the pack pages lie in the tail compaction moves.
        try store.write { transaction in
            for key in filler { _ = try transaction.delete(key, in: "filler") }
        }
        for round in 0..<6 {
            try store.write { transaction in
                for key in 0..<5 { try transaction.put(bytes("k\((round * 7 + key) % 40)"), generator.bytes(200), in: "history") }
            }
        }
        #expect(try store.snapshot.state.packs.packPages > 0)
        let expected = try contents(of: store)
        let reader = try store.beginRead()
        try store.compact()
        #expect(try contents(of: reader) == expected)
        reader.close()
        #expect(try contents(of: store) == expected)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        // Then clearing the history keeps the head, whole, and a sound store.
        try store.clearHistory()
        #expect(try contents(of: store) == expected)
        let cleared = try store.verify()
        #expect(cleared.isSound && cleared.leakedPageCount == 0, "\(cleared)")
    }

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
