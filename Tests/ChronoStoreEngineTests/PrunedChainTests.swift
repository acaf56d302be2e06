// Keyframes under pruning: chain limits count the versions retention keeps, and no chain of
// deltas, dropped versions included, passes the hard limit.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Delta chains under pruning")
struct PrunedChainTests {
    /// Packs every root two steps behind the head, with a page stored whole once 8 deltas
    /// would end at it.
    static let packing = HistoryPacking(window: 2, batchRoots: 1, leafChainLimit: 8, branchChainLimit: 8, rootChainLimit: 8)

    /// 1,000 records over about 40 leaves, then `commits` commits of one random put each, so a
    /// leaf changes about every 40 commits. Returns, over the packed leaf versions (the spec
    /// reader's view), how many are keyframes and deltas, and the longest chain of deltas from a
    /// packed leaf to a keyframe or a hot page.
    static func packedLeaves(
        retention: RetentionPolicy, commits: Int, seed: UInt64, in directory: TemporaryDirectory
    ) throws -> (keyframes: Int, deltas: Int, longestChain: Int) {
        let path = directory.file("\(retention).chrono")
        // Durable: in deferred mode, when a background checkpoint lets freed pages be reused
        // varies from run to run, and with it which page numbers (and so which chains) recur.
        var options = StoreOptions(durability: .durable, retention: retention)
        options.packing = packing
        let store = try Store.create(at: path, options: options)
        var generator = SeededGenerator(seed: seed)
        let keys = (0..<1_000).map { bytes(String(format: "key %04d", $0)) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(120), in: "items") }
        }
        var written: [(TransactionID, Int, [UInt8])] = []
        for _ in 0..<commits {
            let index = Int(generator.next() % UInt64(keys.count))
            let value = generator.bytes(120)
            try store.write { try $0.put(keys[index], value, in: "items") }
            written.append((try store.snapshot.head.transaction, index, value))
        }
        // Every retained root still reads as written.
        let retained = Set(try store.history().map(\.id))
        for (root, index, value) in written where retained.contains(root) {
            let reader = try store.beginRead(at: .root(root))
            #expect(try reader.value(forKey: keys[index], in: "items") == value, "root \(root)")
            reader.close()
        }
        let report = try store.verify()
        #expect(report.isSound, "\(report.problems)")
        try store.close()

        // Record leaves only (holding "key "): the catalog's leaf changes in every commit, so
        // every version of it is retained and its keyframes are all needed.
        return try Self.recordLeafChains(SpecReader(path: path), marker: bytes("key "))
    }

    /// Over the packed leaf versions whose bytes hold `marker` (the spec reader's view): how many
    /// are keyframes and deltas, and the longest chain of deltas from one of them to a keyframe or
    /// a hot page.
    static func recordLeafChains(_ spec: SpecReader, marker: [UInt8]) throws -> (keyframes: Int, deltas: Int, longestChain: Int) {
        func isRecordLeaf(_ page: [UInt8]) -> Bool {
            page[4] == 1 && (0..<(page.count - marker.count)).contains { page[$0..<($0 + marker.count)].elementsEqual(marker) }
        }
        var keyframes = 0
        var deltas = 0
        var longest = 0
        for (reference, page) in try spec.rebuildEveryPackedPage() where isRecordLeaf(page) {
            var chain = 0
            var current = reference
            while case .packed? = try spec.packValue(current) {
                let base = try spec.packEntry(current).base
                if base.isNone { break }
                chain += 1
                current = base
            }
            longest = max(longest, chain)
            if try spec.packEntry(reference).base.isNone { keyframes += 1 } else { deltas += 1 }
        }
        return (keyframes, deltas, longest)
    }

    @Test func withoutPruningTheLimitBoundsEveryChain() throws {
        let seed = SeededGenerator.seed()
        print("PrunedChainTests seed \(seed) (CHRONO_SEED replays it)")
        let directory = try TemporaryDirectory()
        let found = try Self.packedLeaves(retention: .limitless, commits: 600, seed: seed, in: directory)
        #expect(found.longestChain <= 8, "\(found)")
        // Each leaf has about 15 versions: one in 9 to 15 is whole.
        #expect(found.keyframes * 20 >= found.deltas, "keyframes where chains reach the limit: \(found)")
    }

    /// Last 100 roots keep two or three versions of each leaf, so a chain of 8 retained deltas
    /// never forms and keyframes are rare; before the chain's start was recorded, every ninth
    /// leaf version was stored whole whatever pruning had freed.
    @Test func pruningLeavesKeyframesWhereRetainedChainsNeedThemAndTheHardLimitHolds() throws {
        let seed = SeededGenerator.seed()
        print("PrunedChainTests seed \(seed) (CHRONO_SEED replays it)")
        let directory = try TemporaryDirectory()
        let pruned = try Self.packedLeaves(retention: .lastRoots(100), commits: 600, seed: seed, in: directory)
        print("pruned: \(pruned)")
        #expect(pruned.deltas > 20, "\(pruned)")
        // The limit counts retained versions as an estimate (even spacing between a chain's start
        // and the version's death), so a chain can run a version or two past 8: seeds measured
        // 6–9. Twice the limit is far below the hard limit, and what reading costs stays small.
        #expect(pruned.longestChain <= 16, "\(pruned)")
        #expect(pruned.longestChain <= WriteTransaction.hardChainLimit)
        #expect(pruned.keyframes * 50 < pruned.keyframes + pruned.deltas, "keyframes: \(pruned)")
    }

    /// Leaves that change every eighth commit under last-30 retention keep about four retained
    /// versions each, so the retained estimate never calls for a keyframe; the hard limit does,
    /// once 250 deltas (dropped versions included) would end at a page. No run in the index and
    /// no chain of packed pages passes it.
    @Test func theHardLimitCutsChainsThatPruningKeepsShort() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.chrono")
        // Durable, as in `packedLeaves`: deferred checkpoints made the longest run vary (60–151).
        var options = StoreOptions(durability: .durable, retention: .lastRoots(30))
        options.packing = Self.packing
        let store = try Store.create(at: path, options: options)
        // 700-byte inline values of one size (so no put overflows a leaf): five records a leaf,
        // the leaves' records written in turn.
        let keys = (0..<40).map { bytes(String(format: "key %02d", $0)) }
        func value(_ step: Int) -> [UInt8] {
            bytes(String(format: "value %06d ", step)) + [UInt8](repeating: UInt8(step & 0xFF), count: 680)
        }
        try store.write { transaction in
            for (index, key) in keys.enumerated() { try transaction.put(key, value(index), in: "items") }
        }
        for step in 0..<3_200 {
            // Record 5 × (step % 8) + step / 8 % 5: one record of each leaf in turn.
            try store.write { try $0.put(keys[5 * (step % 8) + (step / 8) % 5], value(step), in: "items") }
        }
        let report = try store.verify()
        #expect(report.isSound, "\(report.problems)")
        try store.close()

        let spec = try SpecReader(path: path)
        var longestRun = 0
        for (key, value) in spec.packIndexEntries {
            guard let reference = try SpecReader.parseKey(key, birthFirst: spec.pageKeysBirthFirst),
                case .unpacked(let run) = try SpecReader.parseValue(value, key: reference)
            else { continue }
            longestRun = max(longestRun, Int(run))
            #expect(Int(run) <= WriteTransaction.hardChainLimit, "run \(run) at \(reference)")
        }
        print("hard limit: longest run \(longestRun)")
        // Record leaves only (holding "value "): the catalog's leaf changes in every commit, so
        // the limit of 8 makes its keyframes.
        let (keyframes, _, longest) = try Self.recordLeafChains(spec, marker: bytes("value "))
        print("hard limit: \(keyframes) keyframes, longest chain \(longest)")
        #expect(longest <= WriteTransaction.hardChainLimit)
        // Runs grew far past the limit of 8 (pruning kept the retained chains short) and, with
        // 400 versions of each leaf packed, one was stored whole at 250 and the run restarted.
        #expect(longestRun >= 100 && longestRun < WriteTransaction.hardChainLimit, "longest run \(longestRun)")
        #expect(keyframes == 0, "the retained versions' chains are short: \(keyframes) keyframes")
    }

    @Test func deltasStopAtTheHardLimitWhateverTheEstimate() {
        let tail = TransactionID(1_000)
        let start = TransactionID(10)
        // A long chain whose versions pruning mostly freed: deltas until the hard limit.
        let long = ChainRun(length: WriteTransaction.hardChainLimit - 1, start: start)
        #expect(WriteTransaction.allowsDelta(after: long, limit: 8, deadIn: TransactionID(1_010), tail: tail))
        let full = ChainRun(length: WriteTransaction.hardChainLimit, start: start)
        #expect(!WriteTransaction.allowsDelta(after: full, limit: 8, deadIn: TransactionID(1_010), tail: tail))
        #expect(!WriteTransaction.allowsDelta(after: .full, limit: WriteTransaction.hardChainLimit, deadIn: TransactionID(1_010), tail: tail))
        // Nothing pruned: the limit itself.
        let short = ChainRun(length: 8, start: TransactionID(2_000))
        #expect(!WriteTransaction.allowsDelta(after: short, limit: 8, deadIn: TransactionID(2_100), tail: tail))
        #expect(WriteTransaction.allowsDelta(after: ChainRun(length: 7, start: TransactionID(2_000)), limit: 8, deadIn: TransactionID(2_100), tail: tail))
    }

    @Test func theRetainedEstimateCountsOnlyVersionsThatDiedAfterTheTail() {
        // A chain of 40 versions that died between roots 100 and 500: with the tail at 300,
        // about half of them remain.
        let chain = ChainRun(length: 40, start: TransactionID(100))
        #expect(WriteTransaction.retainedLength(of: chain, deadIn: TransactionID(500), tail: TransactionID(300)) == 20)
        // Nothing pruned after its start, or no start recorded: the whole chain counts.
        #expect(WriteTransaction.retainedLength(of: chain, deadIn: TransactionID(500), tail: TransactionID(50)) == 40)
        #expect(WriteTransaction.retainedLength(of: ChainRun(length: 40, start: .none), deadIn: TransactionID(500), tail: TransactionID(300)) == 40)
        // Every version older than the tail: none remains.
        #expect(WriteTransaction.retainedLength(of: chain, deadIn: TransactionID(500), tail: TransactionID(600)) == 0)
        #expect(HistoryPacking(leafChainLimit: 255).leafChainLimit == WriteTransaction.hardChainLimit)
    }
}
