// Leaf fill: random inserts leave leaves well filled (an overflowing leaf shares with a neighbour before it splits).
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Leaf fill")
struct LeafFillTests {
    /// Every key reads back, and a scan returns exactly the model in key order.
    private func expectContents(
        _ store: Store, _ collection: String, _ model: [[UInt8]: [UInt8]], _ context: String
    ) throws {
        let reader = try store.beginRead()
        defer { reader.close() }
        let scanned = try entries(reader, collection)
        let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        // Compared first, so that a failure names the context rather than printing every entry.
        let sameKeys = scanned.map(\.0) == expected.map(\.key)
        let sameValues = sameKeys && scanned.map(\.1) == expected.map(\.value)
        #expect(sameKeys, "\(context): a scan returned \(scanned.count) keys, expected \(expected.count) in order")
        #expect(!sameKeys || sameValues, "\(context): a scan returned other values")
        for (key, value) in model where try reader.value(forKey: key, in: collection) != value {
            Issue.record("\(context): key \(key) does not read back")
            return
        }
    }

    /// The workload of issue 14's measurement: 10,000 random 24-byte keys with 150-byte values,
    /// in one transaction, left leaves 64 % full before leaves shared with their neighbours.
    @Test func randomInsertsInOneTransactionFillLeavesAtLeastSeventySevenPercent() throws {
        let seed = SeededGenerator.seed()
        print("LeafFillTests seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("fill.chrono"))
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { transaction in
            for _ in 0..<10_000 {
                let (key, value) = (generator.bytes(24), generator.bytes(150))
                model[key] = value
                try transaction.put(key, value, in: "data")
            }
        }
        let result = try census(store, collection: "data")
        let fill = result.fill(pageSize: store.pageSize)
        print("LeafFillTests one transaction: \(result.leafCount) leaves, \(result.branchCount) branches, fill \(fill)")
        #expect(fill >= 0.77, "seed \(seed): leaf fill \(fill)")
        try expectContents(store, "data", model, "seed \(seed)")
        #expect(try store.verify().isSound)
    }

    /// The same keys put by many small commits: neighbours are committed pages, copied when shared.
    @Test func randomInsertsOverManyCommitsFillLeavesAtLeastSeventySevenPercent() throws {
        let seed = SeededGenerator.seed()
        print("LeafFillTests seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.file("fill-commits.chrono")
        let options = StoreOptions(retention: .lastRoots(4))
        var store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        for commit in 0..<200 {
            try store.write { transaction in
                for _ in 0..<25 {
                    let (key, value) = (generator.bytes(24), generator.bytes(150))
                    model[key] = value
                    try transaction.put(key, value, in: "data")
                }
            }
            if commit % 50 == 49 {
                try store.close()
                store = try Store.open(at: path, options: options)
            }
        }
        let result = try census(store, collection: "data")
        let fill = result.fill(pageSize: store.pageSize)
        print("LeafFillTests 200 commits: \(result.leafCount) leaves, \(result.branchCount) branches, fill \(fill)")
        #expect(fill >= 0.77, "seed \(seed): leaf fill \(fill)")
        try expectContents(store, "data", model, "seed \(seed)")
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report)")
    }

    /// Ascending keys still fill every leaf but the last completely (the right-edge split).
    @Test func ascendingAppendsStillFillLeavesCompletely() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("append.chrono"))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 14)
        try store.write { transaction in
            for index in 0..<5_000 {
                try transaction.put(bytes(String(format: "key-%08d", index)), generator.bytes(100), in: "data")
            }
        }
        let result = try census(store, collection: "data")
        let fill = result.fill(pageSize: store.pageSize)
        #expect(fill >= 0.95, "leaf fill \(fill)")
        #expect(try store.verify().isSound)
    }

    /// Puts of new keys, replaces with other sizes (inline up to a near-maximal entry, and large
    /// values in overflow pages) and deletes, checked against a dictionary after every commit,
    /// with reopens: leaves share, split and merge many times over.
    @Test(arguments: [4096, 8192])
    func mixedEditsMatchADictionaryAcrossCommitsAndReopens(pageSize: Int) throws {
        let seed = SeededGenerator.seed()
        print("LeafFillTests seed: \(seed) (page size \(pageSize))")
        var generator = SeededGenerator(seed: seed)
        func roll(_ sides: Int) -> Int { Int.random(in: 0..<sides, using: &generator) }
        let directory = try TemporaryDirectory()
        let path = directory.file("mixed.chrono")
        let options = StoreOptions(pageSize: pageSize, retention: .lastRoots(3))
        var store = try Store.create(at: path, options: options)
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        var keys: [[UInt8]] = []
        func randomValue() -> [UInt8] {
            switch roll(20) {
            case 0: generator.bytes(pageSize + roll(3 * pageSize))  // overflow pages
            case 1: generator.bytes(pageSize / 4 + roll(pageSize / 8))  // near the largest inline entry
            default: generator.bytes(roll(300))
            }
        }
        for commit in 0..<60 {
            try store.write { transaction in
                for _ in 0..<(20 + roll(120)) {
                    let choice = roll(10)
                    if choice < 6 || keys.isEmpty {
                        let key = generator.bytes(1 + roll(roll(4) == 0 ? 200 : 30))
                        let value = randomValue()
                        if model.updateValue(value, forKey: key) == nil { keys.append(key) }
                        try transaction.put(key, value, in: "data")
                    } else if choice < 8 {
                        let key = keys[roll(keys.count)]
                        let value = randomValue()
                        model[key] = value
                        try transaction.put(key, value, in: "data")
                    } else {
                        let position = roll(keys.count)
                        let key = keys.remove(at: position)
                        model[key] = nil
                        #expect(try transaction.delete(key, in: "data"))
                    }
                }
            }
            let context = "seed \(seed), page size \(pageSize), commit \(commit)"
            try expectContents(store, "data", model, context)
            if commit % 10 == 9 {
                let report = try store.verify()
                #expect(report.isSound && report.leakedPageCount == 0, "\(context): \(report)")
            }
            if roll(6) == 0 {
                try store.close()
                store = try Store.open(at: path, options: options)
            }
        }
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report)")
    }
}
