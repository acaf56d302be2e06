// Packed root pages: each is a delta against its lineage child's root page, keyframes bound the
// chains, and dropping a child whose root page is a base rewrites its parent's entry first.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Packed root pages")
struct PackedRootPageTests {
    /// Packing that starts two roots behind the head, packs each root at once and stores a root
    /// page whole once three deltas would end at it.
    static let packing = HistoryPacking(window: 2, batchRoots: 1, rootChainLimit: 3)

    @Test func rootPagesAreDeltasAgainstTheirLineageChildWithKeyframesBetween() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        var options = StoreOptions(retention: .limitless)
        options.packing = Self.packing
        let store = try Store.create(at: path, options: options)
        for step in 0..<40 {
            try store.write(label: "step \(step)") { try $0.put(bytes("key \(step % 5)"), bytes("value \(step)"), in: "items") }
        }
        try store.close()

        // Read through the independent reader written from Docs/FileFormat.md.
        let spec = try SpecReader(path: path)
        let entries = try spec.history()
        let rootPageOf = Dictionary(uniqueKeysWithValues: entries.map { ($0.root, $0.rootPage) })
        var deltas = 0
        var keyframes = 0
        for entry in entries {
            guard case .packed = try spec.packValue(entry.rootPage) else { continue }
            let base = try spec.packEntry(entry.rootPage).base
            if base.isNone {
                keyframes += 1
                continue
            }
            deltas += 1
            let child = try #require(entries.first { $0.lineageParent == entry.root }, "root \(entry.root) has no lineage child")
            #expect(base == rootPageOf[child.root], "root \(entry.root)'s root page is a delta against \(base), not its child's root page")
            // Follow the chain to a keyframe or a hot root page: never more than the limit.
            var links = 1
            var next = base
            while case .packed = try spec.packValue(next), !(try spec.packEntry(next).base).isNone {
                next = try spec.packEntry(next).base
                links += 1
            }
            #expect(links <= 3, "root \(entry.root): \(links) deltas to a whole root page")
            let label = try spec.root(entry.rootPage).label
            #expect(entry.root == 1 || label?.hasPrefix("step ") == true, "root \(entry.root) rebuilds with its label")
        }
        print("packed root pages: \(deltas) deltas, \(keyframes) keyframes")
        #expect(deltas > 20 && keyframes >= 5)

        // Every root reads its own value through the engine too.
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        for item in try reopened.history() {
            guard let label = item.label, let step = Int(label.dropFirst(5)) else { continue }
            let reader = try reopened.beginRead(at: .root(item.id))
            defer { reader.close() }
            #expect(text(try reader.value(forKey: bytes("key \(step % 5)"), in: "items")) == "value \(step)")
        }
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }

    /// Regression for the rebase: a snapshot keeps root R while retention drops R's lineage child
    /// S (a middle drop). R's packed root page was a delta against S's, so it must become a
    /// keyframe before S's root page is freed and its slot reused; otherwise R no longer reads.
    @Test func droppingTheChildWhoseRootPageIsABaseKeepsTheParentReadable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        var options = StoreOptions(retention: .limitless)
        options.packing = Self.packing
        let store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        for step in 0..<4 {
            try store.write(label: "step \(step)") { try $0.put(bytes("key"), bytes("value \(step)"), in: "items") }
        }
        // Pin step 3, the head now, through a snapshot.
        _ = try store.createSnapshot(named: "kept")
        let pinned = try #require(try store.history().first { $0.label == "step 3" }).id
        for step in 4..<20 {
            try store.write(label: "step \(step)") { try $0.put(bytes("key"), bytes("value \(step)"), in: "items") }
        }
        func packedBase(of root: TransactionID) throws -> PageReference? {
            let state = try store.snapshot.state
            let reader = SnapshotReader(pageFile: store.pageFile, pageCount: state.pageCount)
            let trees = HistoryTrees(state: state)
            let rootPage = try #require(try trees.entry(root, reader: reader)).rootPage
            let packs = PackReader(pageFile: store.pageFile, packs: state.packs, pageCount: state.pageCount)
            return try packs.entry(rootPage)?.entry.base
        }
        let before = try #require(try packedBase(of: pinned), "the pinned root's root page is packed")
        #expect(!before.isNone, "the pinned root's root page is a delta before its child goes")

        // Keep the last 3 roots: the pinned root stays, every root between it and them goes.
        let lastThree = Array(try store.history().prefix(3).map(\.id))
        try store.setRetention(.lastRoots(3))
        _ = try store.prune()
        #expect(try store.history().map(\.id) == lastThree, "only the last 3 roots are on the head's line")
        #expect(try packedBase(of: pinned)?.isNone == true, "the pinned root's root page is now whole")
        // Reuse the freed slots, then read the pinned root.
        for step in 20..<40 {
            try store.write(label: "step \(step)") { try $0.put(bytes("filler \(step)"), [UInt8](repeating: 7, count: 700), in: "other") }
        }
        let reader = try store.beginRead(at: .root(pinned))
        defer { reader.close() }
        #expect(text(try reader.value(forKey: bytes("key"), in: "items")) == "value 3")
        #expect(try store.snapshots().map(\.root) == [pinned])
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }
}
