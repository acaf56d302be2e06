// A seeded randomized test of the B+tree through the real engine, checked against a sorted model.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("B+tree against a sorted model")
struct BTreeModelTests {
    /// Random puts, replaces, deletes, runs, drops, aborts and reopens; after every transaction the
    /// whole store must equal the model, and every few transactions verify must find it sound.
    /// Replay a failure with `CHRONO_SEED=<printed seed>`; `CHRONO_SOAK=1` runs a longer workload.
    @Test(arguments: [4096, 16384], [Durability.durable, .deferred])
    func randomTransactionsKeepTheStoreEqualToTheModel(pageSize: Int, durability: Durability) throws {
        let seed = SeededGenerator.seed()
        print("BTreeModelTests seed: \(seed) (page size \(pageSize), \(durability))")
        let directory = try TemporaryDirectory()
        let workload = Environment.soakEnabled ? ModelWorkload.soak : .standard
        var run = try ModelRun(
            path: directory.file("model.chrono"), seed: seed,
            options: StoreOptions(pageSize: pageSize, durability: durability, checkpointInterval: 4), workload: workload
        )
        defer { try? run.store.close() }
        do { try run.execute() } catch is ModelDiverged {}
    }
}

@Suite("Write transaction reads")
struct WriteTransactionReadTests {
    /// Regression: reads inside a write transaction went through the snapshot reader and failed
    /// (page birth mismatch or out of range) on the pages the transaction had just written.
    @Test func writeTransactionReadsItsOwnEdits() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("own-edits.chrono"))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("a"), bytes("1"), in: "items") }
        let transaction = try store.beginWrite()
        defer { transaction.abort() }
        try transaction.put(bytes("b"), bytes("2"), in: "items")
        #expect(try transaction.count(in: "items") == 2)
        #expect(text(try transaction.value(forKey: bytes("b"), in: "items")) == "2")
        #expect(try entries(transaction, "items").map { text($0.0)! } == ["a", "b"])
        #expect(try entries(transaction, "items", reverse: true).map { text($0.0)! } == ["b", "a"])
        try transaction.put(bytes("a"), [UInt8](repeating: 7, count: 10_000), in: "items")
        #expect(try transaction.value(forKey: bytes("a"), in: "items") == [UInt8](repeating: 7, count: 10_000))
        #expect(try transaction.delete(bytes("b"), in: "items"))
        #expect(try transaction.value(forKey: bytes("b"), in: "items") == nil)
    }
}

/// How much work one model run does.
private struct ModelWorkload {
    var transactionCount: Int
    var maximumOperationCount: Int
    var verifyInterval: Int
    /// How many values of 100–400 KB may be stored at once.
    var largeValueLimit: Int

    static let standard = ModelWorkload(
        transactionCount: 40, maximumOperationCount: 80, verifyInterval: 4, largeValueLimit: 3)
    static let soak = ModelWorkload(
        transactionCount: 300, maximumOperationCount: 150, verifyInterval: 10, largeValueLimit: 6)
}

/// One collection of the model: the expected entries, plus the keys in a deterministic order so
/// that random picks replay from the seed (dictionary order changes from process to process).
private struct ModelCollection {
    private(set) var values: [[UInt8]: [UInt8]] = [:]
    private(set) var keys: [[UInt8]] = []
    private var positions: [[UInt8]: Int] = [:]

    var count: Int { keys.count }

    mutating func set(_ key: [UInt8], _ value: [UInt8]) {
        if values.updateValue(value, forKey: key) == nil {
            positions[key] = keys.count
            keys.append(key)
        }
    }

    @discardableResult
    mutating func remove(_ key: [UInt8]) -> Bool {
        guard values.removeValue(forKey: key) != nil, let position = positions.removeValue(forKey: key) else {
            return false
        }
        let last = keys.removeLast()
        if position < keys.count {
            keys[position] = last
            positions[last] = position
        }
        return true
    }

    func randomKey(using generator: inout SeededGenerator) -> [UInt8]? {
        keys.isEmpty ? nil : keys[Int.random(in: 0..<keys.count, using: &generator)]
    }

    /// The entries in key order, as the model orders keys.
    var sortedEntries: [([UInt8], [UInt8])] {
        values.sorted { modelPrecedes($0.key, $1.key) }.map { ($0.key, $0.value) }
    }
}

/// The model's key order, written independently of KeyOrder: `memcmp` on the shared prefix, then
/// the shorter key first (the standard library's lexicographic order, which is too slow in debug).
private func modelPrecedes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    let shared = min(lhs.count, rhs.count)
    let order = lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in shared == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, shared) }
    }
    return order != 0 ? order < 0 : lhs.count < rhs.count
}

private typealias ModelContents = [String: ModelCollection]
/// The model's collections as sorted entry lists, computed once per comparison.
private typealias SortedContents = [String: [([UInt8], [UInt8])]]

private func sortedContents(_ contents: ModelContents) -> SortedContents {
    contents.mapValues { $0.sortedEntries }
}

private struct IntentionalAbort: Error {}

/// Stops a run after a recorded divergence: later steps would only repeat it.
private struct ModelDiverged: Error {}

/// A store under test, its model, and the random workload that drives both.
private struct ModelRun {
    static let collectionNames = ["alpha", "beta", "gamma", "δέλτα"]
    static let largeValueByteCount = 100_000

    let path: String
    let seed: UInt64
    let options: StoreOptions
    let workload: ModelWorkload
    var store: Store
    var generator: SeededGenerator
    var model: ModelContents = [:]

    init(path: String, seed: UInt64, options: StoreOptions, workload: ModelWorkload) throws {
        self.path = path
        self.seed = seed
        self.options = options
        self.workload = workload
        self.store = try Store.create(at: path, options: options)
        self.generator = SeededGenerator(seed: seed)
    }

    var pageSize: Int { store.pageSize }

    mutating func roll(_ sides: Int) -> Int { Int.random(in: 0..<sides, using: &generator) }

    /// Records an issue naming the seed and stops the run when `condition` is false.
    func expectModel(
        _ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        guard !condition else { return }
        Issue.record("seed \(seed): \(message())", sourceLocation: sourceLocation)
        throw ModelDiverged()
    }

    // MARK: - Driving the run

    mutating func execute() throws {
        for number in 0..<workload.transactionCount {
            let context = "seed \(seed), transaction \(number)"
            let earlierModel = model
            let heldReader = roll(6) == 0 ? try store.beginRead() : nil
            try runTransaction(context)
            if let heldReader {
                defer { heldReader.close() }
                let sorted = sortedContents(earlierModel)
                guard try compare(heldReader, with: earlierModel, sorted, "\(context), reader held across it") else {
                    return
                }
            }
            let reader = try store.beginRead()
            defer { reader.close() }
            let sorted = sortedContents(model)
            guard try compare(reader, with: model, sorted, context),
                try checkRandomRanges(reader, sorted, count: 8, context)
            else { return }
            if number % workload.verifyInterval == workload.verifyInterval - 1 {
                let report = try store.verify()
                #expect(report.problems == [], "\(context)")
                #expect(report.leakedPageCount == 0, "\(context): \(report)")
                guard report.problems.isEmpty, report.leakedPageCount == 0 else { return }
            }
            if roll(8) == 0 {
                reader.close()
                try store.close()
                store = try Store.open(at: path, options: options)
            }
        }
        let report = try store.verify()
        #expect(report.problems == [] && report.leakedPageCount == 0, "seed \(seed), at the end: \(report)")
        try store.close()
        store = try Store.open(at: path, options: options)
        let reader = try store.beginRead()
        defer { reader.close() }
        _ = try compare(reader, with: model, sortedContents(model), "seed \(seed), after the final reopen")
        let heights = try Self.collectionNames.map { try treeHeight(reader, $0) }
        print(
            "BTreeModelTests seed \(seed), page size \(pageSize): entries \(Self.collectionNames.map { model[$0]?.count ?? 0 }), tree heights \(heights)"
        )
    }

    /// How many levels the collection's tree has (0 when it is empty or missing).
    func treeHeight(_ reader: ReadTransaction, _ collection: String) throws -> Int {
        guard let entry = try reader.collectionEntry(Array(collection.utf8)) else { return 0 }
        var reference = entry.root
        var height = 0
        while !reference.isNone {
            height += 1
            switch try reader.treeReader.node(reference) {
            case .branchPage(let view): reference = view.child(at: 0)
            case .branch(let node): reference = node.children[0]
            case .leafPage, .leaf: reference = .none
            }
        }
        return height
    }

    /// One transaction of random operations, ended by one of four ways of committing or aborting.
    mutating func runTransaction(_ context: String) throws {
        var pending = model
        let operationCount = Int.random(in: 1...workload.maximumOperationCount, using: &generator)
        let label = roll(4) == 0 ? "edit \(roll(1000))" : nil
        var committed: TransactionID?
        switch roll(10) {
        case 0:
            do {
                try store.write(label: label) { transaction in
                    try randomOperations(operationCount, transaction, &pending)
                    throw IntentionalAbort()
                }
                Issue.record("\(context): write did not rethrow the closure's error")
            } catch is IntentionalAbort {}
            return
        case 1:
            let transaction = try store.beginWrite()
            defer { transaction.abort() }
            try randomOperations(operationCount, transaction, &pending)
            transaction.abort()
            #expect(throws: StoreError.transactionFinished) { try transaction.put(bytes("late"), [], in: "alpha") }
            return
        case 2:
            let transaction = try store.beginWrite()
            defer { transaction.abort() }  // after an error; a no-op once committed
            transaction.label = label
            try randomOperations(operationCount, transaction, &pending)
            committed = try transaction.commit()
        default:
            committed = try store.write(label: label) { transaction in
                try randomOperations(operationCount, transaction, &pending)
            }.1
        }
        model = pending
        if let committed {
            let reader = try store.beginRead()
            defer { reader.close() }
            #expect(reader.root.transaction == committed && reader.root.label == label, "\(context): the new head")
        }
    }

    mutating func randomOperations(
        _ count: Int, _ transaction: WriteTransaction, _ pending: inout ModelContents
    ) throws {
        for _ in 0..<count {
            let collection = Self.collectionNames[roll(Self.collectionNames.count)]
            var entries = pending[collection]
            let existed = entries != nil
            let existingKey = entries?.randomKey(using: &generator)
            let choice = roll(1000)
            switch choice {
            case 0..<600:
                let replaced = choice >= 350 ? existingKey : nil
                try put(replaced ?? randomKey(near: existingKey), in: collection, transaction, &entries)
            case 600..<820:
                let key = existingKey ?? randomKey(near: nil)
                let removed = entries?.remove(key) ?? false
                try expectModel(
                    try transaction.delete(key, in: collection) == removed, "delete of an existing key in \(collection)"
                )
            case 820..<860:
                let key = randomKey(near: existingKey)
                let removed = entries?.remove(key) ?? false
                try expectModel(
                    try transaction.delete(key, in: collection) == removed, "delete of a random key in \(collection)")
            case 860..<960:
                try putRun(in: collection, transaction, &entries, descending: choice >= 930)
            case 960..<996:
                try deleteRun(in: collection, transaction, &entries)
            default:
                try expectModel(try transaction.dropCollection(collection) == existed, "drop of \(collection)")
                entries = nil
            }
            pending[collection] = entries
        }
        try compareInsideTransaction(transaction, with: pending)
    }

    /// Compares what the write transaction sees of one collection, and its collection names,
    /// with the pending model.
    private mutating func compareInsideTransaction(_ transaction: WriteTransaction, with pending: ModelContents) throws
    {
        let collection = Self.collectionNames[roll(Self.collectionNames.count)]
        let wanted = pending[collection]?.sortedEntries ?? []
        let reverse = roll(2) == 0
        let seen = try ChronoStoreEngineTests.entries(transaction, collection, reverse: reverse)
        let mismatch = difference(seen, reverse ? wanted.reversed() : wanted)
        try expectModel(mismatch == nil, "scan of \(collection) inside the transaction: \(mismatch ?? "")")
        try expectModel(
            try transaction.count(in: collection) == wanted.count, "count of \(collection) inside the transaction")
        let names = pending.keys.sorted { modelPrecedes(Array($0.utf8), Array($1.utf8)) }
        try expectModel(try transaction.collectionNames() == names, "collection names inside the transaction")
    }

    // MARK: - Operations

    private mutating func put(
        _ key: [UInt8], in collection: String, _ transaction: WriteTransaction, _ entries: inout ModelCollection?
    ) throws {
        let value = randomValue(keyByteCount: key.count, current: entries)
        try transaction.put(key, value, in: collection)
        entries = entries ?? ModelCollection()
        entries!.set(key, value)
        // The transaction reads its own edits.
        let found = try transaction.value(forKey: key, in: collection)
        try expectModel(
            found.map { sameBytes($0, value) } == true, "a put in \(collection) is not visible to its own transaction")
    }

    /// Consecutive keys sharing a prefix, put in ascending or descending order (splits at the edges).
    private mutating func putRun(
        in collection: String, _ transaction: WriteTransaction, _ entries: inout ModelCollection?, descending: Bool
    ) throws {
        let prefix = generator.bytes(
            Int.random(in: 1...(roll(4) == 0 ? store.maximumKeyByteCount - 4 : 12), using: &generator))
        let length = Int.random(in: 10...150, using: &generator)
        let start = Int.random(in: 0...60_000, using: &generator)
        let numbers = descending ? Array((start..<(start + length)).reversed()) : Array(start..<(start + length))
        entries = entries ?? ModelCollection()
        for number in numbers {
            let key =
                prefix + [
                    UInt8(truncatingIfNeeded: number >> 24), UInt8(truncatingIfNeeded: number >> 16),
                    UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number),
                ]
            let value =
                roll(20) == 0 ? randomValue(keyByteCount: key.count, current: entries) : generator.bytes(roll(40))
            try transaction.put(key, value, in: collection)
            entries!.set(key, value)
        }
    }

    /// Deletes a run of neighbouring keys (in key order), which empties and merges leaves.
    private mutating func deleteRun(
        in collection: String, _ transaction: WriteTransaction, _ entries: inout ModelCollection?
    ) throws {
        guard let sorted = entries?.sortedEntries, !sorted.isEmpty else { return }
        let start = roll(sorted.count)
        let end = min(sorted.count, start + Int.random(in: 1...200, using: &generator))
        for (key, _) in sorted[start..<end] {
            entries!.remove(key)
            try expectModel(try transaction.delete(key, in: collection), "delete of a run of keys in \(collection)")
        }
    }

    // MARK: - Random keys and values

    /// A key of 1 byte up to the store's limit, sometimes derived from `neighbour` (a prefix of it,
    /// an extension of it, or it with the last byte changed) so that keys share long prefixes.
    mutating func randomKey(near neighbour: [UInt8]?) -> [UInt8] {
        let maximum = store.maximumKeyByteCount
        if let neighbour, roll(4) == 0 {
            var key = neighbour
            switch roll(3) {
            case 0 where key.count > 1: key.removeLast(Int.random(in: 1..<key.count, using: &generator))
            case 1: key.append(contentsOf: generator.bytes(Int.random(in: 1...3, using: &generator)))
            default: key[key.count - 1] = UInt8(truncatingIfNeeded: generator.next())
            }
            return Array(key.prefix(maximum))
        }
        let length: Int
        switch roll(100) {
        case 0..<55: length = Int.random(in: 1...10, using: &generator)
        case 55..<85: length = Int.random(in: 11...120, using: &generator)
        case 85..<97: length = Int.random(in: 121...maximum, using: &generator)
        default: length = maximum - roll(3)
        }
        if roll(3) == 0 {
            // A narrow alphabet with the extreme byte values makes ties in the leading bytes.
            let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF]
            return (0..<length).map { _ in alphabet[roll(alphabet.count)] }
        }
        return generator.bytes(length)
    }

    /// Mostly small values, some near the inline limit, some in overflow pages, a few of hundreds of KB.
    mutating func randomValue(keyByteCount: Int, current: ModelCollection?) -> [UInt8] {
        let inlineLimit =
            NodeLayout.maximumEntryByteCount(pageSize: pageSize) - NodeLayout.leafEntryFixedByteCount - keyByteCount
        let byteCount: Int
        switch roll(1000) {
        case 0..<6 where largeValueCount() < workload.largeValueLimit:
            byteCount = Int.random(in: Self.largeValueByteCount...400_000, using: &generator)
        case 0..<80: byteCount = Int.random(in: (inlineLimit + 1)...(4 * pageSize), using: &generator)
        case 80..<160: byteCount = max(0, inlineLimit + Int.random(in: -8...8, using: &generator))
        case 160..<200: byteCount = 0
        default: byteCount = Int.random(in: 1...64, using: &generator)
        }
        return generator.bytes(byteCount)
    }

    private func largeValueCount() -> Int {
        model.values.reduce(0) { total, collection in
            total + collection.values.values.reduce(0) { $0 + ($1.count >= Self.largeValueByteCount ? 1 : 0) }
        }
    }

    // MARK: - Comparing the store with the model

    /// Compares names, counts, full scans both ways and sampled lookups. Returns false on a mismatch.
    mutating func compare(
        _ reader: ReadTransaction, with expected: ModelContents, _ sorted: SortedContents, _ context: String
    ) throws -> Bool {
        let names = expected.keys.sorted { modelPrecedes(Array($0.utf8), Array($1.utf8)) }
        let actualNames = try reader.collectionNames()
        #expect(actualNames == names, "\(context): collection names")
        var sound = actualNames == names
        for collection in Self.collectionNames {
            let wanted = sorted[collection] ?? []
            let count = try reader.count(in: collection)
            #expect(count == wanted.count, "\(context): count of \(collection)")
            let forward = try entries(reader, collection)
            let backward = try entries(reader, collection, reverse: true)
            let forwardDifference = difference(forward, wanted)
            let backwardDifference = difference(backward, wanted.reversed())
            #expect(forwardDifference == nil, "\(context): forward scan of \(collection): \(forwardDifference ?? "")")
            #expect(backwardDifference == nil, "\(context): reverse scan of \(collection): \(backwardDifference ?? "")")
            sound = sound && count == wanted.count && forwardDifference == nil && backwardDifference == nil
            for _ in 0..<20 {
                let key = expected[collection]?.randomKey(using: &generator) ?? bytes("absent")
                let absent = randomKey(near: key)
                let lookedUp = try reader.value(forKey: key, in: collection)
                let absentLookup = try reader.value(forKey: absent, in: collection)
                #expect(lookedUp == expected[collection]?.values[key], "\(context): lookup in \(collection)")
                #expect(absentLookup == expected[collection]?.values[absent], "\(context): lookup of a random key")
                sound =
                    sound && lookedUp == expected[collection]?.values[key]
                    && absentLookup == expected[collection]?.values[absent]
            }
        }
        return sound
    }

    /// Scans random ranges (inclusive, exclusive and open bounds, both directions, sometimes stopped
    /// early) and compares each with the model filtered by the same bounds.
    mutating func checkRandomRanges(
        _ reader: ReadTransaction, _ contents: SortedContents, count: Int, _ context: String
    ) throws -> Bool {
        for _ in 0..<count {
            let collection = Self.collectionNames[roll(Self.collectionNames.count)]
            let sorted = contents[collection] ?? []
            var lower = roll(5) == 0 ? nil : randomBound(sorted)
            var upper = roll(5) == 0 ? nil : randomBound(sorted)
            if let low = lower, let high = upper, roll(5) != 0, modelPrecedes(high.key, low.key) {
                (lower, upper) = (high, low)
            }
            let range = KeyRange(lower: lower, upper: upper)
            let reverse = roll(2) == 0
            let limit = roll(4) == 0 ? Int.random(in: 1...20, using: &generator) : Int.max
            var wanted = sorted.filter { Self.admits($0.0, range) }
            if reverse { wanted.reverse() }
            wanted = Array(wanted.prefix(limit))
            var found: [([UInt8], [UInt8])] = []
            try reader.scan(collection, range: range, reverse: reverse) { key, value in
                found.append((key, value))
                return found.count < limit
            }
            let mismatch = difference(found, wanted)
            #expect(
                mismatch == nil,
                "\(context): scan of \(collection) \(describe(range)) reverse \(reverse) limit \(limit): \(mismatch ?? "")"
            )
            if mismatch != nil { return false }
        }
        return true
    }

    private mutating func randomBound(_ sorted: [([UInt8], [UInt8])]) -> KeyBound {
        let key = sorted.isEmpty || roll(3) == 0 ? randomKey(near: nil) : randomKey(near: sorted[roll(sorted.count)].0)
        let exact = sorted.isEmpty || roll(2) == 0 ? key : sorted[roll(sorted.count)].0
        return KeyBound(exact, inclusive: roll(2) == 0)
    }

    /// Whether the range admits `key`, decided with the model's order, not KeyOrder.
    static func admits(_ key: [UInt8], _ range: KeyRange) -> Bool {
        if let lower = range.lower {
            if modelPrecedes(key, lower.key) || (key == lower.key && !lower.isInclusive) { return false }
        }
        if let upper = range.upper {
            if modelPrecedes(upper.key, key) || (key == upper.key && !upper.isInclusive) { return false }
        }
        return true
    }

    private func describe(_ range: KeyRange) -> String {
        func bound(_ bound: KeyBound?) -> String {
            guard let bound else { return "open" }
            return "\(bound.isInclusive ? "inclusive" : "exclusive") \(bound.key.prefix(8))… (\(bound.key.count) bytes)"
        }
        return "from \(bound(range.lower)) to \(bound(range.upper))"
    }
}

/// Byte equality through `memcmp` (the generic `==` on arrays is slow in debug builds).
private func sameBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard !lhs.isEmpty else { return true }
    return lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in memcmp(left.baseAddress!, right.baseAddress!, lhs.count) == 0 }
    }
}

/// A description of the first difference between two entry lists, or nil when they are equal.
private func difference(_ actual: [([UInt8], [UInt8])], _ expected: [([UInt8], [UInt8])]) -> String? {
    for index in 0..<min(actual.count, expected.count) {
        if !sameBytes(actual[index].0, expected[index].0) {
            return "entry \(index): key \(actual[index].0.prefix(8))… (\(actual[index].0.count) bytes), "
                + "expected \(expected[index].0.prefix(8))… (\(expected[index].0.count) bytes)"
        }
        if !sameBytes(actual[index].1, expected[index].1) {
            return
                "entry \(index): value of \(actual[index].1.count) bytes differs from the expected \(expected[index].1.count) bytes"
        }
    }
    return actual.count == expected.count ? nil : "\(actual.count) entries, expected \(expected.count)"
}
