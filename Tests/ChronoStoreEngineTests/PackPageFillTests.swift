// Pack pages come out nearly full: a packing walk leaves its newest roots for the next walk when
// they would only start a mostly empty page, and small roots make walks wait for more of them.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Pack page fill")
struct PackPageFillTests {
    static let capacity = 4096 - PackPage.entriesOffset

    @Test func aWalkKeepsEveryRootWhenItsPagesComeOutFull() {
        // 9 roots of 420 bytes fill one page to 93 %.
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 0, rootBytes: Array(repeating: 420, count: 9), capacity: Self.capacity) == 9)
        // Large roots: 8 × 4,900 bytes fill ten pages to 96 %.
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 0, rootBytes: Array(repeating: 4_900, count: 8), capacity: Self.capacity) == 8)
    }

    @Test func aWalkLeavesTheRootsThatWouldStartAMostlyEmptyPage() {
        // 12 roots of 400 bytes: all of them need two pages (59 % full); 9 fill one page to 89 %,
        // the fullest prefix (10 need two pages).
        let small = Array(repeating: 400, count: 12)
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 0, rootBytes: small, capacity: Self.capacity) == 9)
        // When no prefix reaches 75 %, the walk keeps all its roots rather than pack few.
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 0, rootBytes: [2_000, 2_500], capacity: Self.capacity) == 2)
        // 14 roots of 300 bytes: all 14 (4,200 bytes) need two pages at 52 %; 13 (3,900 bytes) fill
        // one page to 96 %.
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 0, rootBytes: Array(repeating: 300, count: 14), capacity: Self.capacity) == 13)
        // What was pending before the walk (keyframes from rebasing) counts toward the pages.
        #expect(WriteTransaction.rootsToKeep(pendingBefore: 1_000, rootBytes: Array(repeating: 300, count: 14), capacity: Self.capacity) == 9)
    }

    @Test func smallRootsMakeTheNextWalkWaitForMoreOfThem() {
        let packing = HistoryPacking.standard
        // 400 bytes a root: 9 fit in 95 % of a page, one more than the batch of 8.
        #expect(WriteTransaction.extraBatchRoots(walkBytes: 3_200, roots: 8, capacity: Self.capacity, packing: packing) == 1)
        // Tiny roots wait at most a window's worth more.
        #expect(WriteTransaction.extraBatchRoots(walkBytes: 800, roots: 8, capacity: Self.capacity, packing: packing) == packing.window)
        // Large roots never wait longer than the batch.
        #expect(WriteTransaction.extraBatchRoots(walkBytes: 40_000, roots: 8, capacity: Self.capacity, packing: packing) == 0)
        #expect(WriteTransaction.extraBatchRoots(walkBytes: 0, roots: 0, capacity: Self.capacity, packing: packing) == 0)
    }

    /// Single-put commits under limitless history with the default packing: pack pages hold at
    /// least 80 % of their capacity in entries (61 % before walks were sized to fill them), every
    /// root still reads as committed, and verify is sound.
    @Test func singlePutHistoryFillsItsPackPages() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .deferred, retention: .limitless))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 41)
        let keys = (0..<2_000).map { bytes("key \($0 * 7_919 % 2_000)") }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(150), in: "items") }
        }
        var expected: [(TransactionID, Int, [UInt8])] = []
        for step in 0..<600 {
            let index = Int(generator.next() % UInt64(keys.count))
            let value = generator.bytes(150)
            try store.write { try $0.put(keys[index], value, in: "items") }
            if step % 50 == 0 { expected.append((try store.snapshot.head.transaction, index, value)) }
        }
        let state = try store.snapshot.state
        let fill = Double(state.packs.packedBytes) / Double(state.packs.packPages * UInt64(Self.capacity))
        print("single puts: \(state.packs.packedPages) versions, \(state.packs.packedBytes) B in \(state.packs.packPages) pack pages, fill \(fill)")
        #expect(state.packs.packPages > 20)
        #expect(fill >= 0.8, "pack pages \(Int(fill * 100)) % full")
        for (root, index, value) in expected {
            let reader = try store.beginRead(at: .root(root))
            defer { reader.close() }
            #expect(try reader.value(forKey: keys[index], in: "items") == value, "root \(root)")
        }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }
}
