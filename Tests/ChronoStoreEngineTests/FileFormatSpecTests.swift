// Docs/FileFormat.md checked against the code: an independent reader written from the spec's
// tables (SpecReader) must see exactly what the engine sees, in the fixtures and in fresh stores,
// and the cases the spec singles out (compaction roots, backups) must hold as written.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("File format spec")
struct FileFormatSpecTests {
    /// Reads `path` through the spec reader, opens it with the engine, and compares everything
    /// both can see: contents of every retained root, history, time index, snapshots, state and
    /// its packed-history fields (which must also be what the pack index holds).
    static func expectAgreement(_ path: String, pageSize: Int, version: UInt32 = FilePreamble.currentFormatVersion) throws {
        let spec = try SpecReader(path: path)
        let store = try Store.open(at: path)
        defer { try? store.close() }
        #expect(spec.formatVersion == version && spec.pageSize == pageSize && store.pageSize == pageSize)
        let packs = try store.snapshot.state.packs
        #expect(spec.state.packIndex == SpecReference(page: packs.index.page.rawValue, birth: packs.index.birth.rawValue))
        #expect(spec.state.packCursor == packs.cursor.rawValue && spec.state.packDepth == packs.depth)
        let summary = try spec.packSummary()
        #expect(summary == SpecPackSummary(packedPages: packs.packedPages, packedBytes: packs.packedBytes, packPages: packs.packPages))
        // The free tree (pages and journal) lists as many pages as the state counts, each once.
        let free = try spec.freePages()
        #expect(UInt64(free.count) == spec.state.freePageCount && Set(free).count == free.count)
        #expect(free.allSatisfy { $0 > 0 && $0 < spec.state.pageCount })
        let entries = try spec.history()
        let items = try store.history(allBranches: true).sorted { $0.id < $1.id }
        #expect(entries.map(\.root) == items.map(\.id.rawValue))
        #expect(spec.state.tail == entries.first?.root && spec.state.retainedRootCount == UInt64(entries.count))
        #expect(spec.state.pruneCursor == (try store.snapshot.state.pruneCursor.rawValue))
        let snapshots = try spec.snapshots()
        #expect(snapshots.map(\.0) == (try store.snapshots()).map(\.name))
        for (entry, item) in zip(entries, items) {
            let root = try spec.root(entry.rootPage)
            #expect(root.id == entry.root, "a root page's birth is its root id")
            #expect(entry.historyParent == item.parent?.rawValue ?? 0 && entry.time == item.timeMilliseconds)
            #expect(root.label == item.label && root.time == entry.time)
            #expect(item.snapshots == snapshots.filter { $0.1 == entry.root }.map(\.0), "snapshot names in name order")
            #expect(item.isHead == (entry.rootPage == spec.state.head))
            // Every retained root reads the same through the spec and through an as-of read.
            let reader = try store.beginRead(at: .root(TransactionID(entry.root)))
            defer { reader.close() }
            #expect(try Self.specContents(spec.collections(of: root)) == contents(of: reader), "root \(entry.root)")
        }
        let times = entries.map { (UInt64(max($0.time, 0)), $0.root) }.sorted { $0 < $1 }
        #expect(try spec.timeIndex().elementsEqual(times) { $0 == $1 })
        let timeline = try spec.headTimeline()
        #expect(UInt64(timeline.count) == spec.state.headTimelineCount)
        if let newest = timeline.last {
            #expect(entries.first { $0.rootPage == spec.state.head }?.root == newest.2, "the newest record names the head")
            #expect(timeline.map(\.0) == timeline.map(\.0).sorted(), "times never decrease")
        }
    }

    @Test func readsByTimeFollowTheHeadTimelineAsTheSpecDescribesIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("timeline.chrono")
        let clock = ManualClock(1_750_000_000_000)
        var options = StoreOptions(retention: .lastRoots(3))
        options.clock = clock.wallClock
        let store = try Store.create(at: path, options: options)
        let start = clock.now
        for round in 0..<12 {
            clock.now += 7
            switch round % 4 {
            case 0, 1: try store.write { try $0.put(bytes("k"), bytes("v\(round)"), in: "c") }
            case 2: try store.undo()
            default: if round % 8 == 3 { try store.redo() } else { try store.undo() }
            }
        }
        let reads = try ((start - 1)...clock.now).map { milliseconds -> UInt64? in
            do {
                let read = try store.beginRead(at: .time(milliseconds))
                defer { read.close() }
                return read.root.transaction.rawValue
            } catch StoreError.rootNotRetained(let root) {
                return root.rawValue
            } catch StoreError.noRootAtOrBefore {
                return nil
            }
        }
        try store.close()
        try Self.expectAgreement(path, pageSize: 4096)
        let spec = try SpecReader(path: path)
        #expect(!spec.state.headTimeline.isNone && spec.state.headTimelineCount <= 8)
        #expect(try ((start - 1)...clock.now).map { try spec.headRoot(at: $0) } == reads)
    }

    static func specContents(_ collections: [String: [([UInt8], [UInt8])]]) -> Contents {
        collections.filter { !$0.value.isEmpty }.mapValues { Dictionary(uniqueKeysWithValues: $0) }
    }

    @Test func theFixtureReadsTheSameThroughTheSpecAndTheEngine() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: FormatFixture.store, toPath: directory.file("v1.chrono"))
        try Self.expectAgreement(directory.file("v1.chrono"), pageSize: 4096, version: 1)
        let spec = try SpecReader(path: directory.file("v1.chrono"))
        #expect(try spec.collections(of: spec.root(spec.state.head))["blobs"]?.first?.1 == FormatFixture.largeValue)
        // A version 1 state's bytes 200 ..< 256 are zero: nothing packed.
        #expect(spec.state.packIndex.isNone && spec.state.packCursor == 0 && spec.state.packDepth == 0)
        #expect(try spec.packSummary() == SpecPackSummary() && spec.state.packPages == 0)
    }

    @Test(arguments: [4096, 16384, 65536])
    func freshStoresReadTheSameThroughTheSpecAndTheEngine(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("fresh.chrono")
        var random = SeededGenerator(seed: UInt64(pageSize))
        let store = try Store.create(at: path, options: StoreOptions(pageSize: pageSize, retention: .lastRoots(5)))
        for round in 0..<8 {
            try store.write(label: round % 3 == 0 ? nil : "round \(round)") { transaction in
                for index in 0..<40 {
                    let size = index % 13 == 0 ? 3 * pageSize + Int(random.next() % 100) : Int(random.next() % 300)
                    try transaction.put(bytes("k\(round % 3)-\(index)"), random.bytes(size), in: "c\(index % 3)")
                }
                if round > 0 { try transaction.delete(bytes("k\(round % 3)-7"), in: "c1") }
            }
            if round == 3 {
                _ = try store.createSnapshot(named: "b-three")
                _ = try store.createSnapshot(named: "a-three")
            }
            if round == 5 { try store.undo() }
        }
        _ = try store.revert(to: try #require(try store.history().last?.id))
        try store.close()
        try Self.expectAgreement(path, pageSize: pageSize)
    }

    /// Fills and empties `store` so compaction has pages to move, then commits `label`.
    static func churn(_ store: Store, label: String) throws {
        var random = SeededGenerator(seed: 9)
        try store.write(label: "fill") { transaction in
            for index in 0..<600 { try transaction.put(bytes("key \(index)"), random.bytes(200), in: "data") }
        }
        try store.write(label: label) { transaction in
            for index in 0..<550 { try transaction.delete(bytes("key \(index)"), in: "data") }
        }
    }

    @Test func aCompactionRootKeepsTheHeadsLabelAndTimeAndItsParentOnlyInTheHistoryEntry() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("compact.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(1)))
        try Self.churn(store, label: "trim")
        let before = try #require(try store.history().first)
        let pruned = try #require(before.parent)  // the head's parent, already pruned
        try store.compact()
        try store.close()
        try Self.expectAgreement(path, pageSize: 4096)
        let spec = try SpecReader(path: path)
        let entry = try #require(try spec.history().last)
        let root = try spec.root(entry.rootPage)
        #expect(entry.root != before.id.rawValue, "compaction committed a new root")
        #expect(root.label == "trim" && root.time == before.timeMilliseconds && entry.time == before.timeMilliseconds)
        #expect(entry.historyParent == pruned.rawValue && entry.depth == 2)
        #expect(root.parent.isNone, "the replaced head's parent was pruned: the root page names none")
    }

    @Test func aCompactionRootWhoseParentIsRetainedNamesItOnTheRootPage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("compact.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(10)))
        try Self.churn(store, label: "trim")
        try store.compact()
        try store.close()
        let spec = try SpecReader(path: path)
        let entries = try spec.history()
        let head = try #require(entries.last)
        let parent = try #require(entries.first { $0.root == head.historyParent })
        #expect(try spec.root(head.rootPage).parent == parent.rootPage)
    }

    @Test func aBackupKeepsTheSourcesRetention() throws {
        let directory = try TemporaryDirectory()
        for (index, policy) in [RetentionPolicy.limitless, .lastRoots(3), .days(9)].enumerated() {
            let store = try Store.create(at: directory.file("source\(index).chrono"), options: StoreOptions(retention: policy))
            try store.write(label: "one") { try $0.put(bytes("a"), bytes("1"), in: "c") }
            try store.backup(to: directory.file("backup\(index).chrono"))
            try store.close()
            let spec = try SpecReader(path: directory.file("backup\(index).chrono"))
            #expect(spec.state.retentionKind == policy.kindByte && spec.state.retentionParameter == policy.parameter, "\(policy)")
            let entries = try spec.history()
            #expect(entries.map(\.root) == [2] && entries[0].historyParent == 1)
            #expect(try spec.root(entries[0].rootPage).label == "Backup of root 2")
            try Self.expectAgreement(directory.file("backup\(index).chrono"), pageSize: 4096)
        }
    }

    @Test func aBackupWithHistoryRenumbersRootsAndChainsRootPagesInCopyOrder() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("source.chrono"), options: StoreOptions(retention: .lastRoots(3)))
        for round in 0..<5 { try store.write(label: "r\(round)") { try $0.put(bytes("k"), bytes("\(round)"), in: "c") } }
        _ = try store.createSnapshot(named: "kept")
        try store.backupWithHistory(to: directory.file("backup.chrono"))
        try store.close()
        let path = directory.file("backup.chrono")
        try Self.expectAgreement(path, pageSize: 4096)
        let spec = try SpecReader(path: path)
        let entries = try spec.history()
        #expect(entries.map(\.root) == [2, 3, 4])
        #expect(try entries.map { try spec.root($0.rootPage).label } == ["r2", "r3", "r4"])
        #expect(entries.map(\.historyParent) == [0, 2, 3])
        // The root page's parent is the previously copied root: root 2 names root 1 (dropped).
        #expect(try entries.map { try spec.root($0.rootPage).parent.birth } == [1, 2, 3])
        #expect(try spec.snapshots().map { [$0.0, "\($0.1)"] } == [["kept", "4"]])
        #expect(spec.state.retentionKind == 1 && spec.state.retentionParameter == 3)
    }

    // MARK: - The structural checks behind malformedPage, exactly as the spec lists them

    /// A store whose collection "c" is one leaf: keys a, b, c inline and "d" in overflow pages.
    /// Returns its path and the leaf's file offset.
    static func oneLeafStore(in directory: TemporaryDirectory) throws -> (String, Int) {
        let path = directory.file("leaf.chrono")
        let store = try Store.create(at: path)
        try store.write { transaction in
            for key in ["a", "b", "c"] { try transaction.put(bytes(key), bytes("value \(key)"), in: "c") }
            try transaction.put(bytes("d"), [UInt8](repeating: 7, count: 10_000), in: "c")
        }
        let reader = try store.beginRead()
        let leaf = try #require(try reader.collectionEntry(CollectionEntry.validateName("c"))).root.page.rawValue
        reader.close()
        try store.close()
        return (path, Int(leaf) * 4096)
    }

    /// Applies `edit` to a copy of the leaf, reseals its checksum, and reads the whole collection.
    static func readAfterEditing(_ edit: (inout [UInt8], Int) -> Void) throws -> Result<[String], any Error> {
        let directory = try TemporaryDirectory()
        let (path, leaf) = try oneLeafStore(in: directory)
        var image = try RawFile.bytes(path)
        edit(&image, leaf)
        let checksum = SpecReader.crc32c(image[(leaf + 4)..<(leaf + 4096)])
        for index in 0..<4 { image[leaf + index] = UInt8(truncatingIfNeeded: checksum >> (8 * index)) }
        try RawFile.write(path, image)
        let store = try Store.open(at: path)
        defer { try? store.close() }
        return Result { try entries(store.beginRead(), "c").map { text($0.0)! } }
    }

    static func isMalformedPage(_ result: Result<[String], any Error>) -> Bool {
        guard case .failure(StoreError.malformedPage) = result else { return false }
        return true
    }

    static func entryOffset(_ image: [UInt8], _ leaf: Int, _ index: Int) -> Int {
        leaf + Int(SpecReader.u16(image, leaf + 24 + 2 * index))
    }

    @Test func leafChecksAreExactlyTheOnesTheSpecLists() throws {
        // Untouched: four keys, in order.
        #expect(try Self.readAfterEditing { _, _ in }.get() == ["a", "b", "c", "d"])
        // A leaf key of length 0 is rejected.
        let emptyKey = try Self.readAfterEditing { image, leaf in
            let entry = Self.entryOffset(image, leaf, 0)
            image[entry] = 0
            image[entry + 1] = 0
        }
        #expect(Self.isMalformedPage(emptyKey))
        // An entry offset inside the offset array is rejected.
        let insideArray = try Self.readAfterEditing { image, leaf in image[leaf + 24] = 26; image[leaf + 25] = 0 }
        #expect(Self.isMalformedPage(insideArray))
        // Any value field with bit 31 set is an overflow reference, not only 0x80000000.
        let marker = try Self.readAfterEditing { image, leaf in image[Self.entryOffset(image, leaf, 3) + 2] |= 0x05 }
        #expect(try marker.get() == ["a", "b", "c", "d"])
        // Keys must be strictly ascending: swapped offsets are rejected.
        let swapped = try Self.readAfterEditing { image, leaf in
            let first = Array(image[(leaf + 24)..<(leaf + 26)])
            image.replaceSubrange((leaf + 24)..<(leaf + 26), with: image[(leaf + 26)..<(leaf + 28)])
            image.replaceSubrange((leaf + 26)..<(leaf + 28), with: first)
        }
        #expect(Self.isMalformedPage(swapped))
    }
}
