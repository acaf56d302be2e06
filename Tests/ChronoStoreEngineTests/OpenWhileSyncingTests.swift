// Opening without the writer lock while the newest commit's sync finishes: the older state can be
// gone by then, and the opener must take the newest instead of calling the header damaged.
import Foundation
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Opening while another process syncs")
struct OpenWhileSyncingTests {
    /// A store of three commits as its file reads while open, changed so that the newest header
    /// slot's sync is pending and the older state's page reads as another page (reused by a later
    /// commit). Returns the page file to recover from, both slots as crafted, the newest slot as it
    /// was (durable) and which slot index holds it.
    private func craftPendingNewest(_ directory: TemporaryDirectory) throws
        -> (path: String, pageFile: PageFile, newest: HeaderSlot, older: HeaderSlot, durableNewest: HeaderSlot, newestIndex: Int)
    {
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        for index in 0..<3 { try store.write { try $0.put(bytes("k\(index)"), bytes("v\(index)"), in: "c") } }
        let pageSize = store.pageSize
        // The file as it is while the store is open (closing marks the newest state verified in
        // the other slot, so both slots would name it).
        var image = try RawFile.bytes(path)
        try store.close()
        let slots = image.withUnsafeBytes { raw in
            HeaderSlot.offsets.map { HeaderSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + HeaderSlot.byteCount)]))! }
        }
        let newestIndex = slots[0].sequence > slots[1].sequence ? 0 : 1
        var newest = slots[newestIndex]
        let durableNewest = newest
        let older = slots[1 - newestIndex]
        try #require(newest.state != older.state)
        newest.isSyncPending = true
        newest.isVerified = false
        newest.isDurable = false
        image.withUnsafeMutableBytes { raw in
            let offset = HeaderSlot.offsets[newestIndex]
            newest.encode(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset..<(offset + HeaderSlot.byteCount)]))
        }
        let olderState = Int(older.state.page.rawValue) * pageSize
        image[olderState + PageHeader.byteCount] ^= 0xFF
        try RawFile.write(path, image)
        let file = try PosixFile(path: path, create: false, readOnly: true)
        let pageFile = PageFile(file: file, pageSize: pageSize, cache: PageCache(pageCapacity: 16))
        return (path, pageFile, newest, older, durableNewest, newestIndex)
    }

    /// Found under load by `writersInThisAndOtherProcessesTakeTurns`: a helper process opening the
    /// store read the header while the newest slot's sync was pending, skipped that slot, found
    /// the state before it already reused by the next commit (legal once the newest is synced),
    /// saw no newer slot, and threw `noValidHeaderSlot`. Here the header says the newest slot's
    /// sync is pending, the older state's page is damaged (as a reused slot reads), and the
    /// synced sequence the lock file reports moves past the newest slot after the first attempt.
    @Test func aNewestSlotWhoseSyncFinishesDuringRecoveryIsTaken() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-open-syncing")
        let (path, pageFile, newest, older, _, _) = try craftPendingNewest(directory)
        // Without the newest slot's sync known, the only other state is damaged.
        #expect(throws: StoreError.noValidHeaderSlot(path: path)) {
            _ = try Recovery.recoverWhileOthersWrite(pageFile, path: path, patience: .zero) { older.sequence }
        }
        // The writer's sync finishes while the first attempt runs: the retry takes the newest.
        var calls = 0
        let outcome = try Recovery.recoverWhileOthersWrite(pageFile, path: path) {
            calls += 1
            return calls == 1 ? older.sequence : newest.sequence
        }
        #expect(outcome.snapshot.stateReference == newest.state)
        #expect(calls >= 3)
    }

    /// Found under load by `writersThroughAHardLinkAndASymlinkInOtherFoldersExcludeEachOther`: a
    /// writer through a hard link (another name, so another lock file) synced the newest slot and
    /// reused the older state's pages, but its syncs never show in the opener's lock file; the
    /// opener saw no newer slot yet and threw `noValidHeaderSlot`. Here the synced sequence never
    /// moves, and the writer's next slot (naming the newest state, now durable) lands 30 ms after
    /// the first attempt: the opener waits for the header to change and takes it.
    @Test func aSlotWrittenThroughAnotherNameDuringRecoveryIsTaken() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-open-linked")
        let (path, pageFile, newest, older, durableNewest, newestIndex) = try craftPendingNewest(directory)

        // The other name's writer: its next slot goes where the older one was.
        var next = durableNewest
        next.sequence = newest.sequence + 1
        var slotBytes = [UInt8](repeating: 0, count: HeaderSlot.byteCount)
        slotBytes.withUnsafeMutableBytes { next.encode(into: $0) }
        let slotData = Data(slotBytes)
        let writer = Thread {
            Thread.sleep(forTimeInterval: 0.03)
            let handle = FileHandle(forUpdatingAtPath: path)!
            try? handle.seek(toOffset: UInt64(HeaderSlot.offsets[1 - newestIndex]))
            try? handle.write(contentsOf: slotData)
            try? handle.close()
        }
        writer.start()
        let outcome = try Recovery.recoverWhileOthersWrite(pageFile, path: path) { older.sequence }
        #expect(outcome.snapshot.stateReference == newest.state)
    }
}
