// The pack index's two key orders: page first (format version 2) and birth first (version 3),
// and a version 2 file that moves from one to the other.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Pack index key order")
struct PackIndexKeyOrderTests {
    /// A copy of the version 2 packed fixture in `directory`, and the options its history was
    /// packed with.
    static func copyOfVersion2Fixture(in directory: TemporaryDirectory) throws -> (path: String, options: StoreOptions) {
        let path = directory.file("v2.chrono")
        try FileManager.default.copyItem(atPath: FormatFixtureV2.store(version: 2), toPath: path)
        var options = StoreOptions(retention: .limitless)
        options.packing = FormatFixtureV2.packing
        return (path, options)
    }

    /// Writes the fixture's edit `index` for each of `indices`, labelled as the fixture labels them.
    static func edit(_ store: Store, _ indices: Range<Int>) throws {
        for index in indices {
            try store.write(label: "Edit \(index)") { try $0.put(bytes("draft"), bytes(FormatFixtureV2.edit(index)), in: "notes") }
        }
    }

    /// Every retained root labelled "Edit n" reads edit n.
    static func expectEveryEditReads(_ store: Store) throws {
        for item in try store.history() where item.label?.hasPrefix("Edit ") == true {
            let reader = try store.beginRead(at: .root(item.id))
            #expect(text(try reader.value(forKey: bytes("draft"), in: "notes")) == FormatFixtureV2.edit(Int(item.label!.dropFirst(5))!))
            reader.close()
        }
    }

    @Test func pageKeysEncodeAsTheSpecSaysInBothOrders() {
        let reference = PageReference(page: PageID(1234), birth: TransactionID(70))
        #expect(PackIndex.key(reference, order: .pageFirst) == [0x02, 0x04, 0xD2, 0x01, 0x46])
        #expect(PackIndex.key(reference, order: .birthFirst) == [0x01, 0x46, 0x02, 0x04, 0xD2])
        for order in [PackIndex.KeyOrder.pageFirst, .birthFirst] {
            #expect(PackIndex.reference(of: PackIndex.key(reference, order: order), order: order) == reference)
            #expect(PackIndex.reference(of: PackIndex.directoryKey(PageID(1234)), order: order) == nil)
        }
    }

    @Test func byteOrderOfBirthFirstKeysIsNumericOrderOfBirthThenPage() {
        let seed = SeededGenerator.seed()
        print("PackIndexKeyOrderTests seed \(seed) (CHRONO_SEED replays it)")
        var generator = SeededGenerator(seed: seed)
        var references: [PageReference] = []
        for _ in 0..<2_000 {
            // Numbers of every width from 1 to 8 bytes.
            let pageBits = UInt64.random(in: 0...63, using: &generator)
            let birthBits = UInt64.random(in: 0...63, using: &generator)
            references.append(PageReference(
                page: PageID(UInt64.random(in: 0...(UInt64(1) << pageBits), using: &generator)),
                birth: TransactionID(UInt64.random(in: 1...(UInt64(1) << birthBits), using: &generator))))
        }
        let byKey = references.sorted { KeyOrder.compare(PackIndex.key($0, order: .birthFirst), PackIndex.key($1, order: .birthFirst)) < 0 }
        let numeric = references.sorted { ($0.birth.rawValue, $0.page.rawValue) < ($1.birth.rawValue, $1.page.rawValue) }
        #expect(byKey == numeric)
        // Every page key still sorts before every directory key.
        let directory = PackIndex.directoryKey(PageID(0))
        #expect(references.allSatisfy { KeyOrder.compare(PackIndex.key($0, order: .birthFirst), directory) < 0 })
    }

    @Test func aFreshStorePacksWithBirthFirstKeys() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("fresh.chrono")
        var options = StoreOptions(retention: .limitless)
        options.packing = FormatFixtureV2.packing
        let store = try Store.create(at: path, options: options)
        for step in 0..<30 {
            try store.write(label: "step \(step)") { try $0.put(bytes("key \(step % 4)"), bytes("value \(step)"), in: "items") }
        }
        let packs = try store.snapshot.state.packs
        #expect(store.formatVersion == 5 && packs.keyOrder == .birthFirst && packs.packedPages > 0)
        // The index's page keys name packed pages by (birth, page).
        let reader = try store.beginRead()
        var named = 0
        try BTree(root: packs.index, owner: .system).scan(.all, reverse: false, reader: reader.treeReader) { key, value in
            guard let reference = PackIndex.reference(of: key, order: .birthFirst),
                case .packed = try PackIndex.decode(value, page: packs.index.page, owner: reference.birth)
            else { return true }
            #expect(try reader.treeReader.packs?.entry(reference) != nil)
            named += 1
            return true
        }
        reader.close()
        #expect(UInt64(named) == packs.packedPages)
        for item in try store.history() where item.label?.hasPrefix("step ") == true {
            let step = Int(item.label!.dropFirst(5))!
            let old = try store.beginRead(at: .root(item.id))
            #expect(text(try old.value(forKey: bytes("key \(step % 4)"), in: "items")) == "value \(step)")
            old.close()
        }
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// An older library checks the version only when it opens a file, so while another handle
    /// has the store open a write does not upgrade it: it packs within version 2 (page-first
    /// keys, runs without a chain start). The first write with no other handle open upgrades.
    @Test func aVersion2FileOpenElsewhereIsNotUpgradedAndStaysVersion2() throws {
        let directory = try TemporaryDirectory()
        let (path, options) = try Self.copyOfVersion2Fixture(in: directory)
        let other = try Store.open(at: path)
        let store = try Store.open(at: path, options: options)
        let packedBefore = try store.snapshot.state.packs.packedPages
        try Self.edit(store, 40..<60)
        #expect(store.formatVersion == 2 && other.formatVersion == 2)
        // Nor does it journal history edits (version 4): a version 2 reader would miss them.
        #expect(try store.snapshot.state.journal.isEmpty)
        let packs = try store.snapshot.state.packs
        #expect(packs.keyOrder == .pageFirst && packs.packedPages > packedBefore)
        // What a version 2 reader needs: preamble version 2, page-first keys, 2-byte runs.
        let spec = try SpecReader(path: path)
        #expect(spec.formatVersion == 2 && !spec.pageKeysBirthFirst)
        for (key, value) in spec.packIndexEntries where value.first == 2 {
            #expect(value.count == 2, "run value \(value) under \(key)")
        }
        let reader = try other.beginRead()
        #expect(text(try reader.value(forKey: bytes("draft"), in: "notes")) == FormatFixtureV2.edit(59))
        reader.close()
        try other.close()
        try Self.edit(store, 60..<61)
        #expect(store.formatVersion == 5)
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// Compaction rebuilds an upgraded version 2 file's page-first index birth first; every old
    /// root reads the same before and after.
    @Test func compactionRekeysAnUpgradedIndexBirthFirst() throws {
        let directory = try TemporaryDirectory()
        let (path, options) = try Self.copyOfVersion2Fixture(in: directory)
        let store = try Store.open(at: path, options: options)
        try Self.edit(store, 40..<41)
        // A packing commit the edit left due is synced first, so `before` is what compaction copies.
        try store.synchronize()
        let before = try store.snapshot.state.packs
        #expect(store.formatVersion == 5 && before.keyOrder == .pageFirst && before.packedPages > 0)
        try store.compact()
        let after = try store.snapshot.state.packs
        #expect(after.keyOrder == .birthFirst && after.packedPages == before.packedPages && after.packedBytes == before.packedBytes)
        try Self.expectEveryEditReads(store)
        // Packing goes on in the new order (once the roots a walk waits for are there).
        try Self.edit(store, 41..<70)
        #expect(try store.snapshot.state.packs.packedPages > after.packedPages)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }

    /// A power loss at any file operation of the upgrade and of the compaction that rebuilds the
    /// index birth first leaves a store that opens, reads every edit by its label, and verifies.
    @Test func aCrashAnywhereInTheUpgradeAndTheRekeyingCompactionLosesNothing() throws {
        let fixture = try RawFile.bytes(FormatFixtureV2.store(version: 2))
        var options = StoreOptions(retention: .limitless)
        options.packing = FormatFixtureV2.packing
        func workload(_ store: Store) throws {
            try Self.edit(store, 40..<41)
            try store.compact()
        }
        let counting = FaultInjectingFile(name: "count", image: fixture)
        let before = counting.writeCount + counting.syncCount + counting.truncateCount
        try workload(try Store.open(file: counting, options: options))
        let operations = counting.writeCount + counting.syncCount + counting.truncateCount - before
        #expect(operations > 10)
        let seed = SeededGenerator.seed()
        print("PackIndexKeyOrderTests crash seed \(seed) (CHRONO_SEED replays it), \(operations) operations")
        var generator = SeededGenerator(seed: seed)
        for crashAfter in 0...operations {
            let file = FaultInjectingFile(name: "crash", image: fixture)
            let store = try Store.open(file: file, options: options)
            file.crash(afterOperations: crashAfter)
            do { try workload(store) } catch { if !file.hasCrashed { throw error } }
            let image = file.crashImage(using: &generator)
            let reopened = try Store.open(file: FaultInjectingFile(name: "after", image: image), options: options)
            try Self.expectEveryEditReads(reopened)
            let draft = try reopened.read { try $0.value(forKey: bytes("draft"), in: "notes") }
            #expect([FormatFixtureV2.edit(39), FormatFixtureV2.edit(40)].contains(text(draft)), "crash after \(crashAfter)")
            let report = try reopened.verify()
            #expect(report.isSound, "crash after \(crashAfter): \(report.problems)")
            try reopened.close()
        }
    }

    /// An upgraded version 2 file keeps its page-first index while it holds entries; once
    /// clearing history empties it, the new index puts the birth first, and both read right.
    @Test func anUpgradedFileTakesBirthFirstKeysWhenItsIndexStartsOver() throws {
        let directory = try TemporaryDirectory()
        let (path, options) = try Self.copyOfVersion2Fixture(in: directory)
        let store = try Store.open(at: path, options: options)
        try Self.edit(store, 40..<41)
        let upgradedOrder = try store.snapshot.state.packs.keyOrder
        #expect(store.formatVersion == 5 && upgradedOrder == .pageFirst)
        // Without the fixture's snapshot, clearing keeps nothing but the head.
        try store.deleteSnapshot(named: "first")
        try store.clearHistory()
        try Self.edit(store, 41..<60)
        let packs = try store.snapshot.state.packs
        #expect(packs.keyOrder == .birthFirst && packs.packedPages > 0)
        try Self.expectEveryEditReads(store)
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: 4096)
    }
}
