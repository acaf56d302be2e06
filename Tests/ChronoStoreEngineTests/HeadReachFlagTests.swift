// State flag bits 4 and 5: whether the head may reach packed versions, set by the moves that can
// make it so and read by head readers, which then look in the pack before those versions' slots.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Head reaching packed versions")
struct HeadReachFlagTests {
    /// A store whose packing starts `window` roots behind the head and packs every root at once.
    /// `pageBudget` bounds the pages one commit packs (it stops after the root that exhausts it).
    func makeStore(_ directory: TemporaryDirectory, window: Int, pageBudget: Int = 64) throws -> Store {
        var options = StoreOptions(durability: .deferred, retention: .limitless)
        options.packing = HistoryPacking(window: window, batchRoots: 1, leafChainLimit: 3, branchChainLimit: 4, pageBudget: pageBudget)
        return try Store.create(at: directory.file("reach.chrono"), options: options)
    }

    /// One commit: the record "draft" and one of eight fillers take the step number.
    @discardableResult
    func edit(_ store: Store, _ step: Int) throws -> TransactionID {
        try #require(try store.write { transaction in
            try transaction.put(bytes("draft"), bytes("step \(step)"), in: "notes")
            try transaction.put(bytes("filler-\(step % 8)"), [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: 300), in: "notes")
        }.1)
    }

    /// Edits from `step` on until the pack cursor is past `root` (packing waits for a pack page's
    /// worth of deltas).
    func editUntilPacked(_ store: Store, past root: TransactionID, from step: Int) throws {
        var step = step
        while try store.snapshot.state.packs.cursor <= root, step < 400 {
            try edit(store, step)
            step += 1
        }
        try #require(try store.snapshot.state.packs.cursor > root, "packing passed root \(root.rawValue)")
    }

    /// Closes `store` and rewrites its newest state page in the file through `change`, resealed.
    func rewriteState(of store: Store, at path: String, _ change: (PageBuffer) -> Void) throws {
        let stateReference = try store.snapshot.stateReference
        try store.close()
        var image = try RawFile.bytes(path)
        let start = Int(stateReference.page.rawValue) * store.pageSize
        let page = PageBuffer(pageSize: store.pageSize)
        Array(image[start..<(start + store.pageSize)]).withUnsafeBytes { page.bytes.copyMemory(from: $0) }
        change(page)
        page.seal(kind: .state, page: stateReference.page, birth: stateReference.birth)
        image.replaceSubrange(start..<(start + store.pageSize), with: Array(page.readOnly))
        try RawFile.write(path, image)
    }

    func flag(_ store: Store) throws -> Bool? { try store.snapshot.state.headMayReachPackedVersions }

    /// How far a new head reader looks in the pack first (0: never; the cursor plus one: every
    /// version born at or before the pack cursor).
    func packsFirstBelow(_ store: Store) throws -> UInt64? {
        let reader = try store.beginRead()
        defer { reader.close() }
        return reader.treeReader.packs?.packsFirstBelow
    }

    /// Two edits (steps 0 and 1), then edits until the root of step 1 is packed: returns that root.
    func packedHistory(_ store: Store) throws -> TransactionID {
        try edit(store, 0)
        let old = try edit(store, 1)
        try editUntilPacked(store, past: old, from: 2)
        return old
    }

    /// The first byte of each of the eight fillers at the head (nil for a filler never written).
    func fillerSteps(_ store: Store) throws -> [UInt8?] {
        try store.read { reader in try (0..<8).map { try reader.value(forKey: bytes("filler-\($0)"), in: "notes")?.first } }
    }

    /// `verify` finds `store` sound.
    func expectSound(_ store: Store) throws {
        let report = try store.verify()
        #expect(report.isSound, "\(report.problems)")
    }

    func draft(_ store: Store) throws -> String? {
        text(try store.read { try $0.value(forKey: bytes("draft"), in: "notes") })
    }

    @Test func aNewStoreSaysItsHeadReachesNoPackedVersion() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        #expect(try flag(store) == false)
        // Bit 5 set (the state says), bit 4 clear.
        let state = try store.snapshot.state
        let buffer = PageBuffer(pageSize: store.pageSize)
        state.encode(into: buffer.bytes)
        #expect(buffer.bytes.load(fromByteOffset: StateRecord.flagsOffset, as: UInt8.self) & 0x30 == 0x20)
    }

    /// Commits along one line pack only the head's lineage ancestors: the head reads slots first.
    @Test func commitsAndUndoAlongOneLineKeepTheFlagClear() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        for step in 0..<12 { try edit(store, step) }
        let state = try store.snapshot.state
        #expect(state.packs.packedPages > 0 && state.packs.cursor != .none)
        #expect(try flag(store) == false)
        #expect(try packsFirstBelow(store) == 0)
        try store.undo(steps: 1)
        try store.redo()
        #expect(try flag(store) == false)
        #expect(try draft(store) == "step 11")
    }

    /// Regression for the hole Robustness.md describes: after a revert to a packed root, the head
    /// reaches versions packing freed the slots of; its readers must find them in the pack.
    @Test func aRevertToAPackedRootSetsTheFlagAndHeadReadersLookInThePack() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        let old = try packedHistory(store)
        try store.revert(to: old)
        #expect(try flag(store) == true)
        #expect(try packsFirstBelow(store) == store.snapshot.state.packs.cursor.rawValue + 1)
        #expect(try draft(store) == "step 1")
        // The flag stays for later commits (their head still reaches the reverted root's pages),
        // through a reopen, and the head reads what the reverted root held plus the new edits.
        try edit(store, 6)
        #expect(try flag(store) == true)
        try store.close()
        let reopened = try Store.open(at: directory.file("reach.chrono"))
        defer { try? reopened.close() }
        #expect(try flag(reopened) == true)
        #expect(try draft(reopened) == "step 6")
        // The reverted root held steps 0 and 1; the edit after the revert wrote filler 6.
        #expect(try fillerSteps(reopened) == [0, 1, nil, nil, nil, nil, 6, nil])
        #expect(try reopened.verify().isSound)
    }

    /// Regression for the hole Docs/Robustness.md named open before this flag: after a revert to
    /// a packed root the head reaches packed versions, whose slots are free, and head readers read
    /// slots first. Any commit may rewrite such a slot at any moment (another process's, with no
    /// staged page to warn this one), so a reader could parse bytes changing under it. Stand-in
    /// for that rewrite, made deterministic: the test writes into the free slot of each packed leaf
    /// the head reaches a page claiming to be that version but holding another value. A head
    /// reader that reads the slot returns the forged value (it did before the flag); one that
    /// looks in the pack first returns what was committed.
    @Test func headReadersAfterARevertNeverReadAPackedVersionsFreeSlot() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        let loaded = try #require(try store.write { writer in
            for index in 0..<60 { try writer.put(bytes("key-\(index)"), [UInt8](repeating: 1, count: 120), in: "c") }
        }.1)
        var step = 0
        while try store.snapshot.state.packs.cursor <= loaded, step < 400 {
            try store.write { writer in
                for index in stride(from: step % 6, to: 60, by: 6) {
                    try writer.put(bytes("key-\(index)"), [UInt8](repeating: UInt8(2 + step % 200), count: 120), in: "c")
                }
            }
            step += 1
        }
        try #require(try store.snapshot.state.packs.cursor > loaded, "the loading root is packed")
        try store.revert(to: loaded)
        #expect(try flag(store) == true)
        var forged = 0
        try store.read { reader in
            let root = try #require(try reader.collectionEntry(named: "c")).root
            let packs = try #require(reader.treeReader.packs)
            try TreePages.forEach(in: root, reader: reader.treeReader) { page, kind in
                guard kind == .leaf, let committed = try packs.rebuiltFromPack(page) else { return }
                var image = Array(committed.readOnly)
                guard let start = (PageHeader.byteCount..<(image.count - 120)).first(where: { image[$0..<($0 + 120)].allSatisfy { $0 == 1 } })
                else { return }
                image[start] = 9
                let buffer = PageBuffer(pageSize: store.pageSize)
                image.withUnsafeBytes { buffer.bytes.copyMemory(from: $0) }
                buffer.seal(kind: .leaf, page: page.page, birth: page.birth, count: committed.entryCount)
                let handle = try #require(FileHandle(forUpdatingAtPath: directory.file("reach.chrono")))
                try handle.seek(toOffset: page.page.rawValue * UInt64(store.pageSize))
                try handle.write(contentsOf: Data(buffer.readOnly))
                try handle.close()
                forged += 1
            }
        }
        try #require(forged > 0, "no packed leaf reached by the head")
        let values = try store.read { reader in try entries(reader, "c").map(\.1) }
        #expect(values.count == 60)
        #expect(values.allSatisfy { $0 == [UInt8](repeating: 1, count: 120) }, "a head reader read a packed version's free slot")
    }

    /// A revert to a root at or above the pack cursor on the head's own line (undoing the last
    /// few saves as a new commit, the common revert) leaves the flag clear: every packed root lies
    /// below that root on the same line. `verify` checks the claim.
    @Test func aRevertToARecentRootOfTheHeadsLineKeepsTheFlagClear() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        try editUntilPacked(store, past: TransactionID(5), from: 0)
        let cursor = try store.snapshot.state.packs.cursor
        let recent = try #require(try store.history().first { $0.id >= cursor && !$0.isHead })
        try store.revert(to: recent.id)
        #expect(try flag(store) == false)
        #expect(try packsFirstBelow(store) == 0)
        let reverted = try store.beginRead(at: .root(recent.id))
        let expected = text(try reverted.value(forKey: bytes("draft"), in: "notes"))
        reverted.close()
        #expect(try draft(store) == expected)
        try expectSound(store)
    }

    /// `verify` checks the flag's claim: a state that says its head reaches no packed version
    /// while it does (here the revert's state with bit 4 cleared by hand) is reported.
    @Test func verifyReportsAStateThatWronglySaysItsHeadReachesNoPackedVersion() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("reach.chrono")
        let store = try makeStore(directory, window: 2)
        let old = try packedHistory(store)
        try store.revert(to: old)
        #expect(try store.verify().isSound)
        try rewriteState(of: store, at: path) { page in
            let flags: UInt8 = page.bytes.loadLittleEndian(at: StateRecord.flagsOffset)
            #expect(flags & 0x30 == 0x30)
            page.bytes.storeLittleEndian(flags & ~0x10, at: StateRecord.flagsOffset)
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try reopened.snapshot.state.headMayReachPackedVersions == false)
        let problems = try reopened.verify().problems
        #expect(problems.contains { $0.hasPrefix("the state says the head reaches no packed version") }, "\(problems)")
    }

    /// Head readers look only versions born at or before the pack cursor up in the pack first, so
    /// `verify` reports a packed version born after it (here the cursor lowered by hand).
    @Test func verifyReportsAPackedVersionBornAfterThePackCursor() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("reach.chrono")
        let store = try makeStore(directory, window: 2)
        try editUntilPacked(store, past: TransactionID(5), from: 0)
        #expect(try store.verify().isSound)
        try rewriteState(of: store, at: path) { page in
            page.bytes.storeLittleEndian(UInt64(1), at: StateRecord.packCursorOffset)
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        let problems = try reopened.verify().problems
        #expect(problems.contains { $0.contains("is born after the pack cursor 1") }, "\(problems)")
    }

    /// A revert before anything is packed leaves the flag clear (later packing follows the revert's
    /// lineage). Here the revert goes to an undone branch, whose root replaced pages that the
    /// other branch still shares with the fork point; packing along the revert's lineage packs
    /// them. An undo back across the revert root returns the head to that other branch, above the
    /// pack cursor: it then reaches packed versions, and the undo sets the flag (`verify` finds
    /// such a page if it stays clear).
    @Test func anUndoAcrossARevertSetsTheFlagOncePackedHistoryExists() throws {
        let directory = try TemporaryDirectory()
        // One root a packing walk at most: it stops after the undone branch's root.
        let store = try makeStore(directory, window: 3, pageBudget: 1)
        defer { try? store.close() }
        try store.write { writer in
            for index in 0..<120 { try writer.put(bytes("key-\(index)"), [UInt8](repeating: 1, count: 120), in: "c") }
        }
        // A branch that replaces every leaf of "c", undone.
        let branch = try #require(try store.write { writer in
            for index in stride(from: 0, to: 120, by: 4) { try writer.put(bytes("key-\(index)"), [UInt8](repeating: 2, count: 120), in: "c") }
        }.1)
        try store.undo()
        // The other branch edits only "notes": its head shares every "c" page with the fork point.
        let other = try edit(store, 1)
        #expect(try store.snapshot.state.packs.index.isNone)
        try store.revert(to: branch)
        #expect(try flag(store) == false)
        var above = 0
        while try store.snapshot.state.packs.cursor < branch, above < 20 {
            try edit(store, 2 + above)
            above += 1
        }
        let cursor = try store.snapshot.state.packs.cursor
        try #require(cursor >= branch && cursor < other, "packed through the undone branch's root, not past the other head")
        #expect(try flag(store) == false)
        #expect(try packsFirstBelow(store) == 0)
        // The edits after the revert, then the revert root itself: back to the other branch.
        try store.undo(steps: above + 1)
        #expect(try store.snapshot.head.transaction == other)
        #expect(try flag(store) == true)
        let values = try store.read { reader in try entries(reader, "c").map(\.1) }
        #expect(values.count == 120 && values.allSatisfy { $0 == [UInt8](repeating: 1, count: 120) })
        try expectSound(store)
    }

    /// A commit on a head behind the pack cursor starts a line that does not pass the roots packed
    /// above it, though it still reaches versions they replaced.
    @Test func aCommitOnAHeadBehindThePackCursorSetsTheFlag() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        try store.write { writer in
            for index in 0..<120 { try writer.put(bytes("key-\(index)"), [UInt8](repeating: 1, count: 120), in: "c") }
        }
        // Each edit also replaces a leaf of "c", so the roots packed after the undo target
        // replaced pages that the target (and a commit on it) still reaches.
        var step = 0
        while try store.snapshot.state.packs.cursor.rawValue < 8, step < 400 {
            try edit(store, step)
            try store.write { writer in
                try writer.put(bytes("key-\(step * 37 % 120)"), [UInt8](repeating: 2, count: 120), in: "c")
            }
            step += 1
        }
        // One line of roots with consecutive ids: undo to the root just below the cursor.
        let state = try store.snapshot.state
        try store.undo(steps: Int(state.head.birth.rawValue - state.packs.cursor.rawValue) + 1)
        #expect(try store.snapshot.head.transaction < store.snapshot.state.packs.cursor)
        // An undo along the line leaves the flag clear: a head behind the cursor reads every
        // page from the pack first anyway.
        #expect(try flag(store) == false)
        #expect(try packsFirstBelow(store) == UInt64.max)
        try edit(store, 1000)
        #expect(try flag(store) == true)
        #expect(try draft(store) == "step 1000")
        try expectSound(store)
    }

}
