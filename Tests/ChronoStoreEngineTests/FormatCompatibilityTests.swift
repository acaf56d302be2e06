// Format compatibility: stores written by each format version open and read the same forever.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// Fixtures/format-v1: written once by a version 1 library (`FormatFixture.write()` at that time);
/// Fixtures/format-v2: written by `CHRONO_WRITE_FIXTURES=2 swift test --filter FormatCompatibility`
/// with a version 2 library; Fixtures/format-v3, -v4 and -v5 the same way with
/// `CHRONO_WRITE_FIXTURES=3` (4, 5) and that version's library (version 5's with secure delete).
enum FormatFixture {
    static var directory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/format-v1").path
    }
    static var store: String { directory + "/history.chrono" }
    static var damaged: String { directory + "/damaged-leaf.chrono" }

    /// What the fixture holds at its head.
    static let notes: [String: String] = ["note-1": "{\"title\":\"Buy milk\"}", "note-3": "{\"title\":\"Book dentist\"}"]
    static let largeValue: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// Writes the version 1 fixture's history: labelled commits, a large value, a snapshot, an
    /// undo and a branch. (Run by a version 1 library; a version 2 library writes version 2.)
    static func write() throws {
        try? FileManager.default.removeItem(atPath: store)
        try? FileManager.default.removeItem(atPath: damaged)
        let store = try Store.create(at: Self.store, options: StoreOptions(retention: .limitless))
        try store.write(label: "Add notes") { transaction in
            try transaction.put(bytes("note-1"), bytes(notes["note-1"]!), in: "notes")
            try transaction.put(bytes("note-2"), bytes("{\"title\":\"Call Sam\"}"), in: "notes")
            try transaction.put(bytes("photo"), largeValue, in: "blobs")
        }
        try store.createSnapshot(named: "first")
        try store.write(label: "Finish a note") { try $0.delete(bytes("note-2"), in: "notes") }
        try store.write(label: "Typo") { try $0.put(bytes("note-1"), bytes("oops"), in: "notes") }
        try store.undo()
        try store.write(label: "Add a note") { try $0.put(bytes("note-3"), bytes(notes["note-3"]!), in: "notes") }
        try store.close()
        try FileManager.default.removeItem(atPath: Self.store + ".lock")
        // The damaged copy: one byte flipped in the body of the first leaf of the notes tree.
        var image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.store)))
        let page = try firstNotesLeaf()
        image[Int(page) * 4096 + 100] ^= 0xFF
        try Data(image).write(to: URL(fileURLWithPath: damaged))
    }

    static func firstNotesLeaf() throws -> UInt64 {
        let file = FaultInjectingFile(name: "fixture", image: try [UInt8](Data(contentsOf: URL(fileURLWithPath: store))))
        let store = try Store.open(file: file)
        let reader = try store.beginRead()
        defer { reader.close() }
        let entry = try reader.collectionEntry(CollectionEntry.validateName("notes"))!
        return entry.root.page.rawValue
    }
}

/// Fixtures/format-v2/packed.chrono and format-v3/packed.chrono: the version 1 fixture's history,
/// then 40 edits with packing after every commit, so old roots read through pack pages, deltas
/// and keyframes. The version 2 file's pack index keys put the page number first, the version 3
/// file's the birth.
enum FormatFixtureV2 {
    static var store: String { store(version: 2) }
    static func store(version: Int) -> String {
        URL(fileURLWithPath: FormatFixture.directory).deletingLastPathComponent()
            .appendingPathComponent("format-v\(version)/packed.chrono").path
    }
    static let packing = HistoryPacking(window: 2, batchRoots: 1, leafChainLimit: 4, branchChainLimit: 4)
    static func edit(_ index: Int) -> String { "{\"title\":\"Draft \(index)\"}" }

    /// Writes the fixture of this library's format version.
    static func write() throws {
        let store = store(version: Int(FilePreamble.currentFormatVersion))
        try? FileManager.default.createDirectory(
            atPath: (store as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: store)
        var options = StoreOptions(retention: .limitless)
        options.packing = packing
        // What version 5 adds is packing under secure delete, with named pack entries.
        options.secureDelete = FilePreamble.currentFormatVersion >= 5
        let created = try Store.create(at: store, options: options)
        try created.write(label: "Add notes") { transaction in
            try transaction.put(bytes("note-1"), bytes(FormatFixture.notes["note-1"]!), in: "notes")
            try transaction.put(bytes("photo"), FormatFixture.largeValue, in: "blobs")
        }
        try created.createSnapshot(named: "first")
        for index in 0..<40 {
            try created.write(label: "Edit \(index)") { transaction in
                try transaction.put(bytes("draft"), bytes(edit(index)), in: "notes")
                try transaction.put(bytes("filler-\(index % 9)"), [UInt8](repeating: UInt8(index), count: 300), in: "notes")
            }
        }
        try created.close()
        try FileManager.default.removeItem(atPath: store + ".lock")
    }
}

@Suite("Format compatibility")
struct FormatCompatibilityTests {
    @Test func formatVersionOneFixtureOpensAndReadsAsWritten() throws {
        if Environment.value("CHRONO_WRITE_FIXTURES") == "1" { try FormatFixture.write() }
        // Work on a copy: opening must not be what the test depends on the fixture for.
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: FormatFixture.store, toPath: directory.file("v1.chrono"))
        let store = try Store.open(at: directory.file("v1.chrono"))
        defer { try? store.close() }
        #expect(store.preamble.formatVersion == 1)
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try entries(reader, "notes").map { text($0.0)! } == ["note-1", "note-3"])
        for (key, value) in FormatFixture.notes { #expect(text(try reader.value(forKey: bytes(key), in: "notes")) == value) }
        #expect(try reader.value(forKey: bytes("photo"), in: "blobs") == FormatFixture.largeValue)
        let labels = try store.history(allBranches: true).map { $0.label ?? "" }
        #expect(labels == ["Add a note", "Typo", "Finish a note", "Add notes", ""])
        #expect(try store.snapshots().map(\.name) == ["first"])
        let snapshot = try store.beginRead(at: .snapshot("first"))
        #expect(text(try snapshot.value(forKey: bytes("note-2"), in: "notes")) == "{\"title\":\"Call Sam\"}")
        snapshot.close()
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
        // And it takes new commits: the first write upgrades the file to version 2 in place.
        try store.write { try $0.put(bytes("note-4"), bytes("{}"), in: "notes") }
        #expect(store.formatVersion == 5)
        let preamble = try RawFile.bytes(directory.file("v1.chrono"))
        #expect(preamble[8] == 5 && preamble[FilePreamble.copyOffset + 8] == 5)
        #expect(try store.history(allBranches: true).map { $0.label ?? "" }.dropFirst() == labels[...])
    }

    @Test func anUpgradeInterruptedInThePreambleWriteOpensFromTheCopy() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v1.chrono")
        try FileManager.default.copyItem(atPath: FormatFixture.store, toPath: path)
        let store = try Store.open(at: path)
        try store.write { try $0.put(bytes("note-4"), bytes("{}"), in: "notes") }
        try store.close()
        // A torn second write: the preamble at offset 0 half new, half garbage.
        var image = try RawFile.bytes(path)
        for offset in 20..<40 { image[offset] ^= 0xA5 }
        try RawFile.write(path, image)
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(reopened.formatVersion == 5)
        #expect(text(try reopened.read { try $0.value(forKey: bytes("note-4"), in: "notes") }) == "{}")
        // A crash before the second write leaves version 1 at offset 0 and the copy unused.
        var untouched = try RawFile.bytes(FormatFixture.store)
        let copy = Array(image[FilePreamble.copyOffset..<(FilePreamble.copyOffset + FilePreamble.byteCount)])
        untouched.replaceSubrange(FilePreamble.copyOffset..<(FilePreamble.copyOffset + FilePreamble.byteCount), with: copy)
        try RawFile.write(directory.file("half.chrono"), untouched)
        let half = try Store.open(at: directory.file("half.chrono"))
        defer { try? half.close() }
        #expect(half.formatVersion == 1)
    }

    @Test(arguments: [2, 3, 4, 5]) func packedFixtureOpensAndReadsPackedHistoryAsWritten(version: Int) throws {
        if Environment.value("CHRONO_WRITE_FIXTURES") == "\(version)", version == FilePreamble.currentFormatVersion {
            try FormatFixtureV2.write()
        }
        let directory = try TemporaryDirectory()
        let path = directory.file("v\(version).chrono")
        try FileManager.default.copyItem(atPath: FormatFixtureV2.store(version: version), toPath: path)
        var options = StoreOptions(retention: .limitless)
        options.packing = FormatFixtureV2.packing
        let store = try Store.open(at: path, options: options)
        defer { try? store.close() }
        #expect(store.formatVersion == UInt32(version))
        #expect(try store.snapshot.state.packs.packedPages > 0)
        let keyOrder: PackIndex.KeyOrder = version == 2 ? .pageFirst : .birthFirst
        #expect(try store.snapshot.state.packs.keyOrder == keyOrder)
        // Version 5's fixture has secure delete, so its pack entries name their pages.
        #expect(try store.snapshot.state.packs.namesEntries == (version >= 5))
        #expect(try store.snapshot.state.secureDelete == (version >= 5))
        let items = try store.history()
        #expect(items.count == 42)
        for item in items where item.label?.hasPrefix("Edit ") == true {
            let index = Int(item.label!.dropFirst(5))!
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            #expect(text(try reader.value(forKey: bytes("draft"), in: "notes")) == FormatFixtureV2.edit(index))
            #expect(try reader.value(forKey: bytes("photo"), in: "blobs") == FormatFixture.largeValue)
        }
        let snapshot = try store.beginRead(at: .snapshot("first"))
        #expect(try snapshot.value(forKey: bytes("draft"), in: "notes") == nil)
        snapshot.close()
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        // Written before state flag bit 5: the state does not say whether the head reaches packed
        // versions, so head readers look in the pack first for versions born by the pack cursor.
        let written = try store.snapshot.state
        #expect(written.headMayReachPackedVersions == nil)
        let head = try store.beginRead()
        #expect(head.treeReader.packs?.packsFirstBelow == written.packs.cursor.rawValue + 1)
        head.close()
        // New commits upgrade a version 2 file to version 3 in place; its pack index keeps the
        // page-first key order it was written in, and packing goes on in that order.
        for index in 40..<60 {
            try store.write(label: "Edit \(index)") { transaction in
                try transaction.put(bytes("draft"), bytes(FormatFixtureV2.edit(index)), in: "notes")
            }
        }
        #expect(store.formatVersion == FilePreamble.currentFormatVersion)
        let state = try store.snapshot.state
        #expect(state.packs.keyOrder == keyOrder && state.packs.packedPages > 0)
        #expect(state.packs.namesEntries == (version >= 5))
        // A state that did not say, with packed history, counts as "may reach", and the new
        // library's commits keep the flag set (no walk can tell what an older writer packed).
        #expect(state.headMayReachPackedVersions == true)
        let settled = try store.beginRead()
        #expect(settled.treeReader.packs?.packsFirstBelow == state.packs.cursor.rawValue + 1)
        settled.close()
        for item in try store.history() where item.label?.hasPrefix("Edit ") == true {
            let reader = try store.beginRead(at: .root(item.id))
            defer { reader.close() }
            #expect(text(try reader.value(forKey: bytes("draft"), in: "notes")) == FormatFixtureV2.edit(Int(item.label!.dropFirst(5))!))
        }
        let after = try store.verify()
        #expect(after.isSound && after.leakedPageCount == 0, "\(after)")
        try store.close()
        try FileFormatSpecTests.expectAgreement(path, pageSize: store.pageSize)
    }

    @Test func damagedFixtureReportsThePageAndKeepsOtherDataReadable() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: FormatFixture.damaged, toPath: directory.file("damaged.chrono"))
        let store = try Store.open(at: directory.file("damaged.chrono"))
        defer { try? store.close() }
        let leaf = try FormatFixture.firstNotesLeaf()
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect { try reader.value(forKey: bytes("note-1"), in: "notes") } throws: { error in
            (error as? StoreError)?.damagedPage == PageID(leaf)
        }
        #expect(try reader.value(forKey: bytes("photo"), in: "blobs") == FormatFixture.largeValue)
        let report = try store.verify()
        #expect(report.problems.contains { $0.contains("page \(leaf) ") })
    }
}
