// The state journal (format version 4): history-tree edits carried in the state page, written out
// to the trees' pages only when they no longer fit; its encoding is checked byte for byte.
import Foundation
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("State journal")
struct StateJournalTests {
    /// The pages of the five journaled trees, as (page, birth) pairs.
    private static func journaledTreePages(_ store: Store) throws -> Set<PageReference> {
        let state = try store.snapshot.state
        let reader = SnapshotReader(pageFile: store.pageFile, pageCount: state.pageCount)
        var pages: Set<PageReference> = []
        for root in [state.historyIndex, state.lineageIndex, state.timeIndex, state.headTimeline, state.freeTree] {
            try TreePages.forEach(in: root, reader: reader) { page, _ in pages.insert(page) }
        }
        return pages
    }

    /// What the journal is for: a single-put commit under `lastRoots(1)` copies no page of the
    /// history, lineage or time index, the head timeline or the free tree, while history, reads,
    /// page reuse and the verifier see every edit.
    @Test func singlePutCommitsWriteNoHistoryOrFreeTreePage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .durable, retention: .lastRoots(1)))
        try store.write { try $0.put(bytes("k"), bytes("v0"), in: "c") }
        for round in 1..<20 { try store.write { try $0.put(bytes("k"), bytes("v\(round)"), in: "c") } }
        let before = try Self.journaledTreePages(store)
        let fileBefore = try store.snapshot.state.pageCount
        for round in 20..<80 { try store.write { try $0.put(bytes("k\(round % 30)"), bytes("v\(round)"), in: "c") } }
        #expect(try Self.journaledTreePages(store) == before, "a commit copied a page of a journaled tree")
        let state = try store.snapshot.state
        #expect(!state.journal.historyIndex.isEmpty && !state.journal.freeTree.isEmpty && state.retainedRootCount == 1)
        // Freed pages are reused through the journaled free tree: the file does not grow.
        #expect(state.pageCount == fileBefore, "\(fileBefore) pages before, \(state.pageCount) after")
        let items = try store.history()
        #expect(items.map(\.id) == [state.head.birth])
        #expect(try store.verify().isSound)
        try store.close()
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try reopened.history().map(\.id) == [state.head.birth])
        #expect(text(try reopened.beginRead().value(forKey: bytes("k19"), in: "c")) == "v79")
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// Limitless history outgrows the state page: commits write the journal out and start a new
    /// one, and every root, its time and the head timeline read the same before and after each
    /// flush, in this process, after reopening, and through the spec reader.
    @Test(arguments: [4096, 16384]) func aJournalThatOutgrowsTheStatePageIsWrittenOutAndNothingIsLost(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let clock = ManualClock(1_700_000_000_000)
        var options = StoreOptions(pageSize: pageSize, retention: .limitless)
        options.clock = clock.wallClock
        let store = try Store.create(at: path, options: options)
        var flushes = 0
        var sizes: [Int] = []
        for round in 0..<150 {
            clock.now += 1_000
            try store.write(label: "edit \(round)") { try $0.put(bytes("k"), bytes("v\(round)"), in: "c") }
            let journal = try store.snapshot.state.journal
            if journal.isEmpty || journal.encodedByteCount < sizes.last ?? 0 { flushes += 1 }
            sizes.append(journal.encodedByteCount)
            #expect(journal.encodedByteCount <= StateJournal.writeOutThreshold(pageSize: pageSize))
        }
        #expect(flushes >= 3, "journal sizes \(sizes)")
        #expect(try store.snapshot.state.hasHeadTimeline)
        // history() lists the head and its past: 151 roots, 131 once the head is 20 back.
        func check(_ store: Store, listed: Int) throws {
            let items = try store.history()
            #expect(items.count == listed)
            for item in items where item.label != nil {
                let round = Int(item.label!.dropFirst(5))!
                let reader = try store.beginRead(at: .root(item.id))
                defer { reader.close() }
                #expect(text(try reader.value(forKey: bytes("k"), in: "c")) == "v\(round)")
                // The head timeline answers reads by time for every commit.
                let byTime = try store.beginRead(at: .time(item.timeMilliseconds))
                defer { byTime.close() }
                #expect(byTime.root.transaction == item.id)
            }
            let report = try store.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        }
        try check(store, listed: 151)
        // Undo and redo across the journal's edges, later than every commit.
        clock.now += 1_000
        _ = try store.undo(steps: 40)
        for _ in 0..<20 { _ = try store.redo() }
        try check(store, listed: 131)
        try store.close()
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        try check(reopened, listed: 131)
        try FileFormatSpecTests.expectAgreement(path, pageSize: pageSize)
    }

    /// One transaction that edits thousands of keys (here: retention cut from limitless to two
    /// roots, which drops 1,500 roots and their head timeline records) writes the journal out to
    /// the pages as it goes instead of merging an ever longer journal into every scan (which made
    /// trimming the timeline quadratic), and the result is the same store.
    @Test func aTransactionEditingThousandsOfKeysWritesTheJournalOutAsItGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .deferred, retention: .limitless))
        for round in 0..<1_500 { try store.write { try $0.put(bytes("k\(round % 7)"), bytes("v\(round)"), in: "c") } }
        let before = try store.snapshot.state
        #expect(before.headTimelineCount > 1_000)
        try store.setRetention(.lastRoots(2))
        try store.prune()
        let state = try store.snapshot.state
        #expect(state.retainedRootCount <= 3 && state.headTimelineCount <= 6, "\(state.retainedRootCount) roots, \(state.headTimelineCount) records")
        #expect(state.journal.encodedByteCount <= StateJournal.writeOutThreshold(pageSize: 4096))
        let listed = try store.history(allBranches: true)
        #expect(listed.count == Int(state.retainedRootCount), "\(listed.map(\.id)) listed, \(state.retainedRootCount) retained")
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        #expect(text(try store.beginRead().value(forKey: bytes("k1"), in: "c")) == "v1499")
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// The mechanism behind the test above: past `inMemoryLimit` bytes an edit writes the
    /// journal to the pages and later edits go there directly; lookups and scans see every edit.
    @Test func aJournalPastItsInMemoryLimitGoesToThePages() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("store.chrono"))
        defer { try? store.close() }
        let transaction = try store.beginWrite()
        defer { transaction.abort() }
        var tree = JournaledTree(root: .none)
        for id in 0..<2_000 { try tree.put(IndexKey.pair(UInt64(id), 1), .inline([]), editor: transaction) }
        #expect(tree.writesThrough && tree.journal.encodedByteCount <= JournaledTree.inMemoryLimit && !tree.root.isNone)
        for id in stride(from: 0, to: 2_000, by: 2) { try tree.remove(IndexKey.pair(UInt64(id), 1), editor: transaction) }
        var seen: [UInt64] = []
        try tree.scan(.all, reverse: false, reader: transaction) { key, _ in
            seen.append(IndexKey.first(of: key))
            return true
        }
        #expect(seen == Array(stride(from: UInt64(1), to: 2_000, by: 2)))
        #expect(try tree.lookup(IndexKey.pair(1_999, 1), reader: transaction) != nil)
        #expect(try tree.lookup(IndexKey.pair(1_998, 1), reader: transaction) == nil)
    }

    /// A key of the wrong size can only come from a damaged page of the tree (a scan handing a
    /// crafted key to a later edit); the commit refuses with a typed error naming the tree
    /// instead of trapping in the encoder (a 300-byte key, structure fuzzer seed
    /// 13433323127697941283, not reproducible by seed: its commit times differ per run) or
    /// writing a state the decoder would refuse (a 3-byte key).
    @Test(arguments: [3, 300]) func aJournalRecordOfAnotherSizeIsRefusedBeforeTheStateIsWritten(keyCount: Int) throws {
        var journal = StateJournal()
        journal.headTimeline.set([UInt8](repeating: 7, count: keyCount), [1, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: StoreError.malformedPage(page: PageID(44), reason: "an entry of \(keyCount) key bytes does not belong in this tree")) {
            try journal.check(pageSize: 4096) { $0 == .headTimeline ? PageID(44) : PageID(1) }
        }
        var valid = StateJournal()
        valid.headTimeline.set(IndexKey.pair(1, 2), [1, 0, 0, 0, 0, 0, 0, 0])
        try valid.check(pageSize: 4096) { _ in PageID(1) }
    }

    @Test func theEncodingRoundTripsAndRejectsWhatTheFormatForbids() throws {
        var journal = StateJournal()
        journal.historyIndex.set(HistoryIndex.key(TransactionID(7)), [UInt8](repeating: 1, count: HistoryEntry.byteCount))
        journal.historyIndex.set(HistoryIndex.key(TransactionID(3)), nil)
        journal.timeIndex.set(IndexKey.pair(5, 7), [])
        journal.headTimeline.set(IndexKey.pair(5, 7), [7, 0, 0, 0, 0, 0, 0, 0])
        journal.freeTree.set(FreeTree.key(release: TransactionID(6), sequence: 0), FreeTree.encode([PageID(40)][...]))
        let page = PageBuffer(pageSize: 4096)
        journal.encode(into: page.bytes)
        // tree 1, key 3 removed, first: 1 + 1 + 8 + 2 bytes.
        #expect(page.bytes.loadLittleEndian(at: StateJournal.byteCountOffset, as: UInt16.self) == 12 + 124 + 20 + 28 + 28)
        #expect(Array(page.bytes[296..<308]) == [1, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF])
        let decoded = try StateJournal.decode(page.readOnly, page: PageID(9))
        #expect(decoded == journal && decoded.historyIndex.page == PageID(9))

        func rejects(_ name: String, _ edit: (UnsafeMutableRawBufferPointer) -> Void) {
            let copy = PageBuffer(pageSize: 4096)
            copy.bytes.copyMemory(from: page.readOnly)
            edit(copy.bytes)
            #expect(throws: StoreError.self, "\(name)") { try StateJournal.decode(copy.readOnly, page: PageID(9)) }
        }
        rejects("tree 0") { $0[296] = 0 }
        rejects("tree 5") { $0[296] = 5 }
        rejects("key size") { $0[297] = 9 }
        rejects("value size") { $0[318] = 100 }
        rejects("free tree value not whole pages") { $0[296 + 184 + 18] = 7 }
        rejects("out of order") { $0[296 + 9] = 8 }
        rejects("byte count past the page") { $0.storeLittleEndian(UInt16(4096 - 295), at: StateJournal.byteCountOffset) }
        rejects("record cut by the byte count") { $0.storeLittleEndian(UInt16(13), at: StateJournal.byteCountOffset) }
        rejects("reserved byte") { $0[291] = 1 }
        rejects("bytes after the records") { $0[296 + 212 + 1] = 1 }
        // An empty journal is all zeros: every state before version 4.
        #expect(try StateJournal.decode(PageBuffer(pageSize: 4096).readOnly, page: PageID(9)).isEmpty)
    }
}
