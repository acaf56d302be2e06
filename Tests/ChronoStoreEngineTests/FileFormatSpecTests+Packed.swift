// Format version 2 checked against the code: the spec reader resolves packed references, rebuilds
// every packed page and counts the pack index exactly as the engine does, and reports damage.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

extension FileFormatSpecTests {
    /// Writes a store whose history is packed aggressively: overflow values, deletes, an undo, a
    /// redo, an undo followed by a commit (a branch) and a revert, with pruning.
    static func writePackedStore(at path: String, pageSize: Int) throws {
        var options = StoreOptions(pageSize: pageSize, retention: .lastRoots(20))
        options.packing = HistoryPacking(window: 2, batchRoots: 1, leafChainLimit: 3, branchChainLimit: 4)
        let store = try Store.create(at: path, options: options)
        var random = SeededGenerator(seed: UInt64(pageSize) &+ 2)
        let keyCount = 24 * pageSize / 1024  // enough for branch pages at every page size
        try store.write(label: "fill") { transaction in
            for index in 0..<keyCount { try transaction.put(bytes("key \(index)"), random.bytes(150), in: "items") }
            try transaction.put(bytes("large"), random.bytes(2 * pageSize + 17), in: "blobs")
        }
        for round in 0..<30 {
            try store.write(label: round % 4 == 0 ? nil : "round \(round)") { transaction in
                for _ in 0..<3 {
                    let key = bytes("key \(Int(random.next() % UInt64(keyCount)))")
                    try transaction.put(key, random.bytes(Int(random.next() % 200) + 1), in: "items")
                }
                if round % 7 == 3 { try transaction.put(bytes("large"), random.bytes(pageSize + round), in: "blobs") }
                if round % 5 == 2 { try transaction.delete(bytes("key \(round)"), in: "items") }
            }
            switch round {
            case 8:  // undo, redo, undo: the next commit branches off
                _ = try store.undo()
                _ = try store.redo()
                _ = try store.undo()
            case 14: _ = try store.undo(steps: 2)  // the next commit branches off
            case 22: _ = try store.revert(to: try #require(try store.history().dropFirst(6).first?.id))
            default: break
            }
        }
        try store.close()
    }

    /// Every packed page rebuilds from its pack entry; where its slot still holds it, the bytes
    /// are the slot's. Returns the rebuilt pages and whether each slot was reused since.
    static func expectEveryPackedPageRebuilds(_ spec: SpecReader) throws -> [(SpecReference, page: [UInt8], reused: Bool)] {
        let rebuilt = try spec.rebuildEveryPackedPage()
        #expect(UInt64(rebuilt.count) == spec.state.packedPages)
        return rebuilt.map { reference, page in
            guard let slot = try? spec.slotPage(reference, kinds: nil) else {
                #expect(slotWasReused(spec, reference), "page \(reference.page) born \(reference.birth)")
                return (reference, page, true)
            }
            #expect(slot == page, "page \(reference.page) born \(reference.birth)")
            return (reference, page, false)
        }
    }

    /// "A reused slot always holds a page with a later birth": the slot holds a sealed page with
    /// that number born later, or was never written since the file grew over it (zeros), or
    /// lies past the file.
    static func slotWasReused(_ spec: SpecReader, _ reference: SpecReference) -> Bool {
        let start = Int(reference.page) * spec.pageSize
        guard start + spec.pageSize <= spec.image.count else { return true }
        let slot = Array(spec.image[start..<(start + spec.pageSize)])
        if slot.allSatisfy({ $0 == 0 }) { return true }
        return SpecReader.crc32c(slot[4...]) == SpecReader.u32(slot, 0) && SpecReader.u64(slot, 8) == reference.page
            && SpecReader.u64(slot, 16) > reference.birth
    }

    @Test(arguments: [2, 3, 4]) func thePackedFixtureReadsTheSameThroughTheSpecAndTheEngine(version: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v\(version).chrono")
        try FileManager.default.copyItem(atPath: FormatFixtureV2.store(version: version), toPath: path)
        try Self.expectAgreement(path, pageSize: 4096, version: UInt32(version))
        let spec = try SpecReader(path: path)
        #expect(spec.formatVersion == version && spec.preambleOffset == 0 && spec.state.packedPages > 0)
        #expect(spec.pageKeysBirthFirst == (version >= 3))
        _ = try Self.expectEveryPackedPageRebuilds(spec)
        // Every edit reads by its label, most of them through pack entries.
        var labelled: [String: [UInt8]] = [:]
        for entry in try spec.history() {
            let root = try spec.root(entry.rootPage)
            labelled[root.label ?? ""] = try spec.collections(of: root)["notes"]?.first { $0.0 == bytes("draft") }?.1
        }
        for index in 0..<40 { #expect(labelled["Edit \(index)"] == bytes(FormatFixtureV2.edit(index)), "Edit \(index)") }
        let head = try spec.root(spec.state.head)
        #expect(try spec.collections(of: head)["blobs"]?.first?.1 == FormatFixture.largeValue)
    }

    @Test(arguments: [4096, 16384, 65536])
    func packedFreshStoresReadTheSameThroughTheSpecAndTheEngine(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("packed.chrono")
        try Self.writePackedStore(at: path, pageSize: pageSize)
        try Self.expectAgreement(path, pageSize: pageSize)
        let spec = try SpecReader(path: path)
        let rebuilt = try Self.expectEveryPackedPageRebuilds(spec)
        // What the file holds covers the format: keyframes, deltas, deltas against packed bases,
        // packed leaf, branch and root pages, and slots reused since their page was packed.
        let bases = try rebuilt.map { try spec.packEntry($0.0).base }
        let keyframes = bases.filter(\.isNone).count
        let chained = try bases.filter { try !$0.isNone && spec.packValue($0).map { if case .packed = $0 { true } else { false } } == true }
        let kinds = Set(rebuilt.map { $0.page[4] })
        let reused = rebuilt.filter(\.reused).count
        print("\(pageSize): \(rebuilt.count) packed, \(keyframes) keyframes, \(chained.count) on packed bases, kinds \(kinds.sorted()), \(reused) slots reused, \(spec.state.packPages) pack pages")
        #expect(keyframes > 0 && !chained.isEmpty && keyframes < rebuilt.count)
        #expect(kinds == [1, 2, 5])
        #expect(reused > 0, "some packed pages must be read through their pack entry alone")
    }

    /// Copies a freshly written packed store and returns its path and a packed leaf whose slot
    /// no longer holds it (zeroing the slot, which the free tree owns, when it still does).
    static func packedStoreWithAPackedLeaf(in directory: TemporaryDirectory) throws -> (String, SpecReference) {
        let path = directory.file("damaged.chrono")
        try writePackedStore(at: path, pageSize: 4096)
        let spec = try SpecReader(path: path)
        let leaves = try spec.rebuildEveryPackedPage().filter { $0.1[4] == 1 }.map(\.0)
        let reference = try #require(leaves.first { (try? spec.slotPage($0, kinds: nil)) == nil } ?? leaves.first)
        if (try? spec.slotPage(reference, kinds: nil)) != nil {
            try RawFile.overwrite(in: path, at: reference.page * 4096, with: [UInt8](repeating: 0, count: 4096))
        }
        return (path, reference)
    }

    @Test(arguments: ["checksum", "delta", "length"])
    func aDamagedPackEntryIsReportedAsDamageNotReadAsData(field: String) throws {
        let directory = try TemporaryDirectory()
        let (path, reference) = try Self.packedStoreWithAPackedLeaf(in: directory)
        let before = try SpecReader(path: path)
        #expect(try before.page(reference, kinds: [1])[4] == 1, "the leaf reads through its pack entry")
        guard case .packed(let packPage, _, let offset)? = try before.packValue(reference) else { throw SpecViolation("not packed") }
        let entry = try before.packEntry(reference)
        // Flip one bit of the stored checksum or of the delta's last byte, or shorten the delta
        // by one byte, then reseal the pack page so only the entry is wrong.
        let pack = Int(packPage) * 4096
        var image = try RawFile.bytes(path)
        switch field {
        case "checksum": image[pack + entry.checksumOffset] ^= 0x10
        case "delta": image[pack + offset + entry.byteCount - 1] ^= 0x10
        default:
            try #require(image[pack + entry.checksumOffset + 4] & 0x7F != 0)
            image[pack + entry.checksumOffset + 4] -= 1
        }
        let checksum = SpecReader.crc32c(image[(pack + 4)..<(pack + 4096)])
        for index in 0..<4 { image[pack + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index))) }
        try RawFile.write(path, image)
        let spec = try SpecReader(path: path)
        let failure = #expect(throws: SpecViolation.self) { try spec.page(reference, kinds: [1]) }
        let expected = field == "checksum" ? "checksum of page \(reference.page)" : field == "length" ? "packed:" : ""
        #expect(failure?.description.hasPrefix(expected) == true, "\(failure?.description ?? "")")
        #expect(throws: SpecViolation.self) { try spec.packedPage(reference, kinds: nil) }
        let store = try Store.open(at: path)
        defer { try? store.close() }
        let report = try store.verify()
        #expect(!report.isSound && report.problems.contains { $0.contains("\(reference.page)") }, "\(report.problems)")
    }

    @Test func anUpgradedFileWithATornPreambleReadsFromTheCopyAt1536() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("upgraded.chrono")
        try FileManager.default.copyItem(atPath: FormatFixture.store, toPath: path)
        #expect(try SpecReader(path: path).formatVersion == 1)
        #expect(try RawFile.bytes(path)[1536..<1600].allSatisfy { $0 == 0 }, "a version 1 file has no copy")
        let store = try Store.open(at: path)
        try store.write(label: "after the upgrade") { try $0.put(bytes("k"), bytes("v"), in: "c") }
        try store.close()
        let upgraded = try SpecReader(path: path)
        #expect(upgraded.formatVersion == 5 && upgraded.preambleOffset == 0)
        #expect(try RawFile.bytes(path)[0..<64] == RawFile.bytes(path)[1536..<1600], "the copy is the preamble")
        try RawFile.flipByte(in: path, at: 20)
        let torn = try SpecReader(path: path)
        #expect(torn.formatVersion == 5 && torn.preambleOffset == 1536 && torn.pageSize == 4096)
        try Self.expectAgreement(path, pageSize: 4096)
    }

    @Test func aFreshFileHasNoPreambleCopyAndPutsTheBirthFirstInPackKeys() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("fresh.chrono")
        try Store.create(at: path).close()
        let spec = try SpecReader(path: path)
        #expect(spec.formatVersion == 5 && spec.state.packIndex.isNone && spec.state.packCursor == 0 && spec.state.packDepth == 0)
        // Bit 2 (birth-first page keys) and bit 5 with bit 4 clear (the head reaches no packed version).
        #expect(spec.state.flags == 0x24 && spec.pageKeysBirthFirst)
        #expect(spec.state.packedPages == 0 && spec.state.packedBytes == 0 && spec.state.packPages == 0)
        #expect(try RawFile.bytes(path)[1536..<1600].allSatisfy { $0 == 0 })
        try RawFile.flipByte(in: path, at: 20)
        #expect(throws: SpecViolation.self) { try SpecReader(path: path) }
        #expect(throws: StoreError.self) { try Store.open(at: path) }
    }
}
