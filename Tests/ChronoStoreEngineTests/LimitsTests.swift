// Size limits: longest and empty keys, the inline threshold, overflow boundaries, huge values, names.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Key and value limits")
struct LimitsTests {
    @Test func theLongestKeyFor4KiBPagesIs1320Bytes() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("limit.chrono"))
        defer { try? store.close() }
        #expect(store.maximumKeyByteCount == 1320)
    }

    /// Keys of exactly the limit, differing only in their last byte, fill leaves and branches
    /// (separators are whole keys) and must come back in order, also after a reopen.
    @Test(arguments: [4096, 16384, 65536])
    func aKeyOfExactlyTheLimitRoundTripsAndOneByteMoreIsRejected(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("keys.chrono")
        var store = try Store.create(at: path, options: StoreOptions(pageSize: pageSize))
        let limit = store.maximumKeyByteCount
        var generator = SeededGenerator(seed: UInt64(pageSize))
        let prefix = generator.bytes(limit - 1)
        var expected: [([UInt8], [UInt8])] = []
        for last in stride(from: 0, through: 255, by: 5) {
            let key = prefix + [UInt8(last)]
            expected.append((key, generator.bytes(Int.random(in: 0...(pageSize / 2), using: &generator))))
        }
        try store.write { transaction in
            for (key, value) in expected.shuffled(using: &generator) { try transaction.put(key, value, in: "keys") }
        }
        let tooLong = prefix + [1, 2]
        #expect(throws: StoreError.keyTooLarge(byteCount: limit + 1, limit: limit)) {
            try store.write { try $0.put(tooLong, [1], in: "keys") }
        }
        for reopen in [false, true] {
            if reopen {
                try store.close()
                store = try Store.open(at: path)
            }
            let reader = try store.beginRead()
            defer { reader.close() }
            let found = try entries(reader, "keys")
            #expect(found.map(\.0) == expected.map(\.0))
            #expect(found.map(\.1) == expected.map(\.1))
            #expect(try reader.value(forKey: expected[7].0, in: "keys") == expected[7].1)
            #expect(try reader.value(forKey: tooLong, in: "keys") == nil)
            #expect(try reader.count(in: "keys") == expected.count)
        }
        let report = try store.verify()
        #expect(report.problems == [] && report.leakedPageCount == 0, "\(report)")
        try store.close()
    }

    /// A rejected key fails only its own call: the transaction stays usable and commits the rest.
    @Test func anEmptyOrOverlongKeyIsRejectedWithoutSpoilingTheTransaction() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("empty-key.chrono"))
        defer { try? store.close() }
        #expect(throws: StoreError.emptyKey) { try store.write { try $0.put([], [1], in: "keys") } }
        try store.write { transaction in
            #expect(throws: StoreError.emptyKey) { try transaction.put([], bytes("empty"), in: "keys") }
            #expect(throws: StoreError.keyTooLarge(byteCount: 1321, limit: 1320)) {
                try transaction.put([UInt8](repeating: 1, count: 1321), bytes("long"), in: "keys")
            }
            try transaction.put(bytes("fine"), bytes("kept"), in: "keys")
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try reader.collectionNames() == ["keys"])
        #expect(try reader.count(in: "keys") == 1)
        #expect(try entries(reader, "keys").map { text($0.0) } == ["fine"])
        #expect(try reader.value(forKey: [], in: "keys") == nil)
    }

    @Test func anEmptyValueIsStoredAndDiffersFromAbsence() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("empty-value.chrono"))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("present"), [], in: "values") }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try reader.value(forKey: bytes("present"), in: "values") == [])
        #expect(try reader.value(forKey: bytes("absent"), in: "values") == nil)
        #expect(try reader.count(in: "values") == 1)
    }

    /// The value as the leaf stores it: inline bytes or an overflow reference.
    private func storedForm(_ reader: ReadTransaction, _ key: [UInt8], in collection: String) throws -> LeafValue? {
        guard let entry = try reader.collectionEntry(Array(collection.utf8)) else { return nil }
        return try BTree(root: entry.root, owner: .history).lookup(key, reader: reader.treeReader)
    }

    @Test(arguments: [4096, 16384])
    func valuesAtTheInlineThresholdAndOneByteOverRoundTrip(pageSize: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("threshold.chrono")
        var store = try Store.create(at: path, options: StoreOptions(pageSize: pageSize))
        let limit = store.maximumKeyByteCount
        // A leaf entry may take a third of the page after the branch header: 1,352 bytes for 4 KiB.
        let entryLimit = (pageSize - 40) / 3
        var generator = SeededGenerator(seed: 0x1A1)
        var expected: [(key: [UInt8], value: [UInt8], inline: Bool)] = []
        for keyLength in [1, 2, 100, limit - 1, limit] {
            let threshold = entryLimit - 8 - keyLength
            #expect(NodeLayout.storesInline(keyCount: keyLength, valueCount: threshold, pageSize: pageSize))
            #expect(!NodeLayout.storesInline(keyCount: keyLength, valueCount: threshold + 1, pageSize: pageSize))
            let key = generator.bytes(keyLength - 1)
            expected.append((key + [0x10], generator.bytes(threshold), true))
            expected.append((key + [0x20], generator.bytes(threshold + 1), false))
        }
        #expect(entryLimit - 8 - limit == OverflowReference.byteCount)
        try store.write { transaction in
            for entry in expected { try transaction.put(entry.key, entry.value, in: "threshold") }
        }
        for reopen in [false, true] {
            if reopen {
                try store.close()
                store = try Store.open(at: path)
            }
            let reader = try store.beginRead()
            defer { reader.close() }
            for entry in expected {
                #expect(try reader.value(forKey: entry.key, in: "threshold") == entry.value)
                switch try storedForm(reader, entry.key, in: "threshold") {
                case .inline(let bytes)?:
                    #expect(
                        entry.inline && bytes == entry.value,
                        "a \(entry.value.count)-byte value under a \(entry.key.count)-byte key")
                case .overflow(let reference)?:
                    #expect(!entry.inline && reference.length == UInt64(entry.value.count))
                case nil:
                    Issue.record("key of \(entry.key.count) bytes is missing")
                }
            }
            #expect(try entries(reader, "threshold").count == expected.count)
        }
        let report = try store.verify()
        #expect(report.problems == [] && report.leakedPageCount == 0, "\(report)")
        try store.close()
    }

    /// Values that just fill, or just overflow, one data page or one index page's list of data pages.
    @Test func overflowValuesAtPageBoundariesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("overflow.chrono"))
        defer { try? store.close() }
        let perDataPage = 4096 - PageHeader.byteCount
        let perIndexPage = (4096 - PageHeader.byteCount - PageReference.byteCount) / 8
        let cases: [(byteCount: Int, dataPages: Int, indexPages: Int)] = [
            (perDataPage, 1, 1), (perDataPage + 1, 2, 1),
            (perDataPage * perIndexPage, perIndexPage, 1), (perDataPage * perIndexPage + 1, perIndexPage + 1, 2),
        ]
        var generator = SeededGenerator(seed: 0x0F)
        let values = cases.map { largeRandomBytes($0.byteCount, &generator) }
        try store.write { transaction in
            for (index, value) in values.enumerated() {
                try transaction.put(bytes("value-\(index)"), value, in: "large")
            }
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        for (index, expected) in cases.enumerated() {
            #expect(try reader.value(forKey: bytes("value-\(index)"), in: "large") == values[index])
            guard case .overflow(let reference)? = try storedForm(reader, bytes("value-\(index)"), in: "large") else {
                Issue.record("value \(index) is not stored in overflow pages")
                continue
            }
            var dataPages = 0
            var indexPages = 0
            try Overflow.forEachIndexPage(reference, reader: reader.treeReader) { _, pages in
                indexPages += 1
                dataPages += pages.count
            }
            #expect((dataPages, indexPages) == (expected.dataPages, expected.indexPages), "\(expected.byteCount) bytes")
        }
        let report = try store.verify()
        #expect(report.problems == [] && report.leakedPageCount == 0, "\(report)")
    }

    @Test func aSixteenMebibyteValueRoundTripsAndCanBeReplaced() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("huge.chrono")
        var generator = SeededGenerator(seed: 16)
        let huge = largeRandomBytes(16 << 20, &generator)
        var store = try Store.create(at: path)
        try store.write { try $0.put(bytes("huge"), huge, in: "blobs") }
        try store.close()
        store = try Store.open(at: path)
        do {
            let reader = try store.beginRead()
            defer { reader.close() }
            #expect(try reader.value(forKey: bytes("huge"), in: "blobs") == huge)
            var found: [UInt8]?
            try reader.scan("blobs", range: .all, reverse: true) { _, value in
                found = value
                return false
            }
            #expect(found == huge)
        }
        let before = try store.verify()
        #expect(before.problems == [] && before.leakedPageCount == 0, "\(before)")
        #expect(before.reachablePageCount > (16 << 20) / 4096)
        for round in 0..<3 { try store.write { try $0.put(bytes("huge"), bytes("small \(round)"), in: "blobs") } }
        let after = try store.verify()
        #expect(after.problems == [] && after.leakedPageCount == 0, "\(after)")
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(text(try reader.value(forKey: bytes("huge"), in: "blobs")) == "small 2")
        reader.close()
        try store.close()
    }

    @Test func collectionNamesAndLabelsHaveLimits() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("names.chrono"))
        defer { try? store.close() }
        let longest = String(repeating: "n", count: 255)
        try store.write(label: String(repeating: "l", count: RootRecord.maximumLabelByteCount)) {
            try $0.put(bytes("k"), bytes("v"), in: longest)
        }
        #expect(throws: StoreError.invalidCollectionName(longest + "n")) {
            try store.write { try $0.put(bytes("k"), bytes("v"), in: longest + "n") }
        }
        #expect(throws: StoreError.invalidCollectionName("")) {
            try store.write { try $0.put(bytes("k"), bytes("v"), in: "") }
        }
        let tooLong = RootRecord.maximumLabelByteCount + 1
        #expect(throws: StoreError.labelTooLong(byteCount: tooLong, limit: RootRecord.maximumLabelByteCount)) {
            try store.write(label: String(repeating: "l", count: tooLong)) {
                try $0.put(bytes("k2"), bytes("v"), in: longest)
            }
        }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try reader.collectionNames() == [longest])
        #expect(try reader.count(in: longest) == 1)
        #expect(reader.root.label?.utf8.count == RootRecord.maximumLabelByteCount)
    }
}

/// `count` random bytes, built a word at a time (byte-wise generation is slow in debug builds).
private func largeRandomBytes(_ count: Int, _ generator: inout SeededGenerator) -> [UInt8] {
    let words = (0..<((count + 7) / 8)).map { _ in generator.next() }
    return words.withUnsafeBytes { Array($0.prefix(count)) }
}
