// Head moves and copies that may take the head to packed versions: a redo onto a revert, an undo
// across a restore, a backup with history; and the flag clearing with the last packed version.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

extension HeadReachFlagTests {
    /// A redo onto a revert root, whose history parent is not its lineage parent, may take the
    /// head to packed versions: here the revert is to a packed root. Through the API the state
    /// before such a redo already says the head may reach them (the revert or the undo across it
    /// set the flag, and it stays while packs exist), so the redo's own rule shows only on a state
    /// that says it reaches none. The test writes that state by hand after the undo: a true claim
    /// there (`verify` checks it), which a writer setting the flag only where needed would write.
    @Test func aRedoOntoARevertToAPackedRootSetsTheFlag() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("reach.chrono")
        let store = try makeStore(directory, window: 2)
        let old = try packedHistory(store)
        let line = try store.snapshot.head.transaction
        let reverted = try store.revert(to: old)
        try store.undo()
        #expect(try store.snapshot.head.transaction == line)
        #expect(try flag(store) == true)
        try rewriteState(of: store, at: path) { page in
            let flags: UInt8 = page.bytes.loadLittleEndian(at: StateRecord.flagsOffset)
            page.bytes.storeLittleEndian(flags & ~0x10, at: StateRecord.flagsOffset)
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try flag(reopened) == false)
        let claim = try reopened.verify()
        #expect(claim.isSound, "the line's head reaches no packed version: \(claim.problems)")
        #expect(try reopened.redo() == reverted)
        #expect(try flag(reopened) == true)
        #expect(try packsFirstBelow(reopened) == reopened.snapshot.state.packs.cursor.rawValue + 1)
        #expect(try draft(reopened) == "step 1")
        #expect(try fillerSteps(reopened) == [0, 1, nil, nil, nil, nil, nil, nil])
        try expectSound(reopened)
    }

    /// A restore commits a root with no lineage parent, which reaches no older root's pages: the
    /// flag stays clear. An undo back across it leaves its lineage and sets the flag (here a
    /// cautious one: the line's head reaches no packed version, so `verify` cannot tell); a redo
    /// forward across it again keeps it.
    @Test func anUndoAcrossARestoreSetsTheFlag() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        let old = try packedHistory(store)
        let line = try store.snapshot.head.transaction
        let lineDraft = try draft(store)
        try store.backup(to: directory.file("backup.chrono"), of: .root(old))
        let restored = try store.restore(fromBackup: directory.file("backup.chrono"))
        #expect(try flag(store) == false)
        #expect(try packsFirstBelow(store) == 0)
        #expect(try draft(store) == "step 1")
        try edit(store, 500)
        #expect(try flag(store) == false)
        // The edit, then the restore root: back to the line the restore left.
        try store.undo(steps: 2)
        #expect(try store.snapshot.head.transaction == line)
        #expect(try flag(store) == true)
        #expect(try draft(store) == lineDraft)
        try expectSound(store)
        #expect(try store.redo() == restored)
        #expect(try flag(store) == true)
        #expect(try draft(store) == "step 1")
        try expectSound(store)
    }

    /// A backup with history commits its copies in commit order, each packing along its own
    /// lineage, not along the head's: the copy's head may reach packed versions. Here the source
    /// packs nothing and the copy's first packing walk comes at its last root (the standard
    /// window and batch, four roots each, make it due at depth 8), so the flag comes from the
    /// copy's final head move alone. The head is a revert to the first edit, whose leaf the
    /// second edit replaced and that walk packs: the head reaches a packed version.
    @Test func aBackupWithHistoryWhoseHeadReachesPackedVersionsSaysSo() throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions(durability: .deferred, retention: .limitless)
        options.packing = .disabled
        let source = try Store.create(at: directory.file("source.chrono"), options: options)
        defer { try? source.close() }
        // After the empty root (depth 0), a line of four edits (depths 1 to 4).
        let first = try edit(source, 1)
        for step in 2...4 { try edit(source, step) }
        let lineHead = try source.snapshot.head.transaction
        // The head to be: a revert to the first edit (depth 5). Then a revert back to the line's
        // head and two edits (depths 6 to 8): the copy of the last packs the line's first roots.
        let head = try source.revert(to: first)
        try source.revert(to: lineHead)
        try edit(source, 5)
        try edit(source, 6)
        try source.undo(steps: 3)
        #expect(try source.snapshot.head.transaction == head)
        #expect(try source.snapshot.state.packs.index.isNone)
        try source.backupWithHistory(to: directory.file("history.chrono"))
        let copy = try Store.open(at: directory.file("history.chrono"))
        defer { try? copy.close() }
        let state = try copy.snapshot.state
        try #require(!state.packs.index.isNone, "the copy packed history")
        try #require(try copy.snapshot.head.transaction >= state.packs.cursor, "verify checks the head's reach")
        #expect(try flag(copy) == true)
        #expect(try packsFirstBelow(copy) == state.packs.cursor.rawValue + 1)
        #expect(try draft(copy) == "step 1")
        #expect(try fillerSteps(copy) == [nil, 1, nil, nil, nil, nil, nil, nil])
        try expectSound(copy)
        // An undo across the revert, to the line's head: the flag stays.
        try copy.undo()
        #expect(try flag(copy) == true)
        #expect(try draft(copy) == "step 4")
        try expectSound(copy)
    }

    /// The flag stays while any packed version is left, and clears with the last one. After a
    /// revert to a packed root, clearing history leaves the head alone, but it still reaches that
    /// root's packed versions; once edits have replaced every page it reached, clearing history
    /// again leaves nothing packed.
    @Test func theFlagClearsWhenNoPackedVersionIsLeft() throws {
        let directory = try TemporaryDirectory()
        let store = try makeStore(directory, window: 2)
        defer { try? store.close() }
        let old = try packedHistory(store)
        try store.revert(to: old)
        #expect(try flag(store) == true)
        // A crash falls back to the last synced state, whose head stays until a sync: sync
        // first, so that the clear leaves the head alone.
        try store.synchronize()
        try store.clearHistory()
        #expect(try store.snapshot.state.retainedRootCount == 1)
        #expect(try store.snapshot.state.packs.index.isNone == false)
        #expect(try flag(store) == true)
        #expect(try draft(store) == "step 1")
        try expectSound(store)
        // Edits replacing the draft and all eight fillers: every page the head reached.
        for step in 100..<108 { try edit(store, step) }
        #expect(try flag(store) == true)
        try store.synchronize()
        try store.clearHistory()
        #expect(try store.snapshot.state.retainedRootCount == 1)
        #expect(try store.snapshot.state.packs.index.isNone)
        #expect(try flag(store) == false)
        // No pack left to look in.
        #expect(try packsFirstBelow(store) == nil)
        #expect(try draft(store) == "step 107")
        try expectSound(store)
    }
}
