// Unit tests of each layer on its own: checksums, pages, headers, records, nodes, key order, IO, cache.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("CRC-32C")
struct CRC32CTests {
    /// The textbook definition, bit by bit and most significant bit first with the unreflected
    /// polynomial 0x1EDC6F41, reflecting input bytes and the result: shares nothing with the
    /// engine's reflected, table-driven code.
    private static func reference(_ bytes: [UInt8]) -> UInt32 {
        func reflect8(_ byte: UInt8) -> UInt8 { (0..<8).reduce(0) { $0 | (((byte >> $1) & 1) << (7 - $1)) } }
        func reflect32(_ word: UInt32) -> UInt32 {
            (0..<32).reduce(0) { $0 | (((word >> UInt32($1)) & 1) << UInt32(31 - $1)) }
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(reflect8(byte)) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x1EDC_6F41 : crc << 1 }
        }
        return reflect32(crc) ^ 0xFFFF_FFFF
    }

    @Test func knownVectorsMatch() {
        #expect(CRC32C.checksum(bytes("123456789")) == 0xE306_9283)
        #expect(Self.reference(bytes("123456789")) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum(UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
        // RFC 3720 (iSCSI), appendix B.4.
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
    }

    @Test func aFourKilobyteBufferMatchesTheBitwiseReference() {
        var generator = SeededGenerator(seed: 0xC4C)
        let page = generator.bytes(4096)
        let expected = Self.reference(page)
        #expect(CRC32C.checksum(page) == expected)
        #expect(page.withUnsafeBytes { CRC32C.checksum($0) } == expected)
    }

    @Test func everyLengthAndAlignmentMatchesTheBitwiseReference() {
        var generator = SeededGenerator(seed: 0xA11)
        let buffer = generator.bytes(200)
        for start in 0..<9 {
            for count in 0...(buffer.count - start) where count < 40 || count % 7 == 0 {
                let slice = Array(buffer[start..<(start + count)])
                let viaPointer = buffer.withUnsafeBytes {
                    CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)]))
                }
                #expect(viaPointer == Self.reference(slice), "start \(start), count \(count)")
            }
        }
    }
}

@Suite("Page buffer seal and verify")
struct PageBufferTests {
    /// A leaf page 7 born in transaction 3, with a random body.
    private static let template: PageBuffer = {
        var generator = SeededGenerator(seed: 99)
        let page = PageBuffer(pageSize: 4096)
        let body = generator.bytes(4096 - PageHeader.byteCount)
        body.withUnsafeBytes {
            (page.bytes.baseAddress! + PageHeader.byteCount).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
        }
        page.seal(kind: .leaf, page: PageID(7), birth: TransactionID(3), count: 5)
        return page
    }()

    private func sealedPage() -> PageBuffer {
        let page = PageBuffer(pageSize: 4096)
        page.bytes.copyMemory(from: Self.template.readOnly)
        return page
    }

    @Test func aSealedPageVerifiesAndKeepsItsHeader() throws {
        let page = sealedPage()
        try page.verify(page: PageID(7), kind: .leaf, birth: TransactionID(3))
        try page.verify(page: PageID(7), kind: nil, birth: nil)
        #expect(page.kindByte == PageKind.leaf.rawValue)
        #expect(page.entryCount == 5)
        #expect(page.reference == PageReference(page: PageID(7), birth: TransactionID(3)))
    }

    @Test func flippingAnyBitIsAChecksumMismatchNamingThePage() {
        for offset in 0..<4096 {
            let page = sealedPage()
            page.bytes[offset] ^= UInt8(1 << (offset % 8))
            #expect(throws: StoreError.pageChecksumMismatch(page: PageID(7)), "byte \(offset)") {
                try page.verify(page: PageID(7), kind: .leaf, birth: TransactionID(3))
            }
        }
    }

    @Test func wrongIdentityKindAndBirthAreEachReported() {
        let page = sealedPage()
        #expect(throws: StoreError.pageIdentityMismatch(page: PageID(8), found: PageID(7))) {
            try page.verify(page: PageID(8), kind: .leaf, birth: TransactionID(3))
        }
        #expect(throws: StoreError.pageKindMismatch(page: PageID(7), expected: .branch, found: PageKind.leaf.rawValue))
        {
            try page.verify(page: PageID(7), kind: .branch, birth: TransactionID(3))
        }
        #expect(
            throws: StoreError.pageBirthMismatch(page: PageID(7), expected: TransactionID(4), found: TransactionID(3))
        ) {
            try page.verify(page: PageID(7), kind: .leaf, birth: TransactionID(4))
        }
        let errors: [StoreError] = [
            .pageChecksumMismatch(page: PageID(7)), .pageIdentityMismatch(page: PageID(7), found: PageID(8)),
            .pageKindMismatch(page: PageID(7), expected: .branch, found: 1),
            .pageBirthMismatch(page: PageID(7), expected: TransactionID(4), found: TransactionID(3)),
        ]
        for error in errors {
            #expect(error.isDamage && error.damagedPage == PageID(7), "\(error)")
        }
    }
}

@Suite("File preamble and header slots")
struct FileHeaderTests {
    private let preamble = FilePreamble(
        formatVersion: FilePreamble.currentFormatVersion, pageSize: 16384, creationMilliseconds: 1_700_000_000_123,
        identifier: (0..<16).map { UInt8($0 * 11) })

    private func encoded(_ preamble: FilePreamble) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: FilePreamble.byteCount)
        bytes.withUnsafeMutableBytes { preamble.encode(into: $0) }
        return bytes
    }

    /// Stores `value` at `offset` and recomputes the checksum, as a valid but different file would.
    private func resealed(_ bytes: [UInt8], _ value: UInt32, at offset: Int) -> [UInt8] {
        var bytes = bytes
        bytes.withUnsafeMutableBytes { raw in
            raw.storeLittleEndian(value, at: offset)
            let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<FilePreamble.checksumOffset]))
            raw.storeLittleEndian(checksum, at: FilePreamble.checksumOffset)
        }
        return bytes
    }

    private func decode(_ bytes: [UInt8]) throws -> FilePreamble {
        try bytes.withUnsafeBytes { try FilePreamble.decode($0, path: "store.chrono") }
    }

    @Test func preambleRoundTrips() throws {
        let bytes = encoded(preamble)
        #expect(Array(bytes[0..<8]) == FilePreamble.magic)
        #expect(try decode(bytes) == preamble)
    }

    @Test func preambleWithAnyByteChangedIsNotAStore() {
        let bytes = encoded(preamble)
        for offset in 0..<FilePreamble.byteCount {
            var damaged = bytes
            damaged[offset] ^= 0x20
            #expect(throws: StoreError.notAStore(path: "store.chrono"), "byte \(offset)") { try decode(damaged) }
        }
        #expect(throws: StoreError.notAStore(path: "store.chrono")) { try decode(Array(bytes.dropLast())) }
    }

    @Test func preambleWithAValidChecksumButBadFieldsIsRejectedByName() {
        let bytes = encoded(preamble)
        #expect(throws: StoreError.unsupportedFormatVersion(found: 6, supported: 5)) {
            try decode(resealed(bytes, 6, at: FilePreamble.versionOffset))
        }
        #expect(throws: StoreError.unsupportedFormatVersion(found: 0, supported: 5)) {
            try decode(resealed(bytes, 0, at: FilePreamble.versionOffset))
        }
        #expect(throws: StoreError.invalidPageSize(4097)) {
            try decode(resealed(bytes, 4097, at: FilePreamble.pageSizeOffset))
        }
        #expect(throws: StoreError.invalidPageSize(2048)) {
            try decode(resealed(bytes, 2048, at: FilePreamble.pageSizeOffset))
        }
        #expect(throws: StoreError.notAStore(path: "store.chrono")) {
            try decode(resealed(bytes, 0x5A5A_5A5A, at: FilePreamble.magicOffset))
        }
    }

    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func headerSlotRoundTrips(isVerified: Bool, isDurable: Bool) {
        let slot = HeaderSlot(
            sequence: 0xFEDC_BA98_7654_3210, state: PageReference(page: PageID(123_456), birth: TransactionID(99)),
            isVerified: isVerified, isDurable: isDurable)
        var bytes = [UInt8](repeating: 0xAB, count: 512)
        bytes.withUnsafeMutableBytes { slot.encode(into: $0) }
        #expect(bytes.withUnsafeBytes { HeaderSlot.decode($0) } == slot)
        // The rest of the sector is not part of the slot.
        bytes[HeaderSlot.byteCount] ^= 0xFF
        #expect(bytes.withUnsafeBytes { HeaderSlot.decode($0) } == slot)
    }

    @Test func headerSlotWithAnyByteChangedOrNoStateIsRejected() {
        let slot = HeaderSlot(
            sequence: 5, state: PageReference(page: PageID(2), birth: TransactionID(1)), isVerified: true,
            isDurable: true)
        var bytes = [UInt8](repeating: 0, count: 512)
        bytes.withUnsafeMutableBytes { slot.encode(into: $0) }
        for offset in 0..<HeaderSlot.byteCount {
            var damaged = bytes
            damaged[offset] ^= 0x01
            #expect(damaged.withUnsafeBytes { HeaderSlot.decode($0) } == nil, "byte \(offset)")
        }
        #expect(Array(bytes[0..<(HeaderSlot.byteCount - 1)]).withUnsafeBytes { HeaderSlot.decode($0) } == nil)
        #expect([UInt8](repeating: 0, count: 512).withUnsafeBytes { HeaderSlot.decode($0) } == nil)
        var noState = [UInt8](repeating: 0, count: 512)
        noState.withUnsafeMutableBytes {
            HeaderSlot(sequence: 9, state: .none, isVerified: true, isDurable: true).encode(into: $0)
        }
        #expect(noState.withUnsafeBytes { HeaderSlot.decode($0) } == nil)
    }
}

@Suite("Root and state records")
struct RecordCodingTests {
    private func rootPage(_ record: RootRecord, pageSize: Int = 4096) -> PageBuffer {
        let page = PageBuffer(pageSize: pageSize)
        record.encode(into: page.bytes)
        page.seal(kind: .root, page: PageID(12), birth: record.transaction)
        return page
    }

    @Test(arguments: [nil, "Rename “Budget” ✓", String(repeating: "é", count: RootRecord.maximumLabelByteCount / 2)])
    func rootRecordRoundTrips(label: String?) throws {
        let record = RootRecord(
            transaction: TransactionID(42), parent: PageReference(page: PageID(9), birth: TransactionID(41)),
            timeMilliseconds: 1_700_000_000_123, catalog: PageReference(page: PageID(77), birth: TransactionID(40)),
            label: label, invalidated: ListDescriptor(count: 3, firstChunk: .none),
            introduced: ListDescriptor(
                count: 1000, firstChunk: PageReference(page: PageID(88), birth: TransactionID(42))))
        #expect(try RootRecord.decode(rootPage(record)) == record)
        let first = RootRecord(
            transaction: TransactionID(1), parent: .none, timeMilliseconds: -5, catalog: .none, label: nil)
        #expect(try RootRecord.decode(rootPage(first)) == first)
    }

    @Test func rootRecordWithImpossibleLengthsIsMalformed() throws {
        let record = RootRecord(
            transaction: TransactionID(3), parent: .none, timeMilliseconds: 0, catalog: .none, label: "x")
        let longLabel = rootPage(record)
        longLabel.bytes.storeLittleEndian(
            UInt16(RootRecord.maximumLabelByteCount + 1), at: RootRecord.labelLengthOffset)
        expectMalformed(page: PageID(12)) { _ = try RootRecord.decode(longLabel) }

        var tooManyInline = record
        tooManyInline.invalidated = ListDescriptor(count: 300, firstChunk: .none)
        expectMalformed(page: PageID(12)) { _ = try RootRecord.decode(rootPage(tooManyInline)) }

        let negative = rootPage(record)
        negative.bytes.storeLittleEndian(UInt64.max, at: RootRecord.introducedOffset)
        expectMalformed(page: PageID(12)) { _ = try RootRecord.decode(negative) }
    }

    private func statePage(_ record: StateRecord) -> PageBuffer {
        let page = PageBuffer(pageSize: 4096)
        record.encode(into: page.bytes)
        page.seal(kind: .state, page: PageID(30), birth: record.transaction)
        return page
    }

    private let state = StateRecord(
        transaction: TransactionID(17), previous: PageReference(page: PageID(29), birth: TransactionID(16)),
        syncedTransaction: TransactionID(15), head: PageReference(page: PageID(31), birth: TransactionID(17)),
        historyIndex: PageReference(page: PageID(40), birth: TransactionID(12)),
        freeTree: PageReference(page: PageID(41), birth: TransactionID(17)), pageCount: 1_000_000,
        tail: TransactionID(3),
        retainedRootCount: 15, freePageCount: 4321)

    @Test func stateRecordRoundTrips() throws {
        #expect(try StateRecord.decode(statePage(state)) == state)
        var empty = state
        empty.freeTree = .none
        empty.previous = .none
        #expect(try StateRecord.decode(statePage(empty)) == empty)
    }

    @Test func stateRecordWithoutHeadOrPagesIsMalformed() {
        var noHead = state
        noHead.head = .none
        expectMalformed(page: PageID(30)) { _ = try StateRecord.decode(statePage(noHead)) }
        var tooFewPages = state
        tooFewPages.pageCount = 1
        expectMalformed(page: PageID(30)) { _ = try StateRecord.decode(statePage(tooFewPages)) }
        var futureHead = state
        futureHead.head = PageReference(page: PageID(31), birth: TransactionID(18))
        expectMalformed(page: PageID(30)) { _ = try StateRecord.decode(statePage(futureHead)) }
    }
}

/// Expects `body` to throw ``StoreError/malformedPage(page:reason:)`` naming `page`.
private func expectMalformed(
    page: PageID, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    let expectation = "expected a malformed-page error for \(page)\(what.isEmpty ? "" : " from \(what)")"
    do {
        try body()
        Issue.record("\(expectation); nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        guard case .malformedPage(let found, _) = error, found == page else {
            Issue.record("\(expectation); got \(error)", sourceLocation: sourceLocation)
            return
        }
    } catch {
        Issue.record("\(expectation); got \(error)", sourceLocation: sourceLocation)
    }
}

// MARK: - BTree: node layout and key order

@Suite("Node layout")
struct NodeLayoutTests {
    static let pageID = PageID(9)

    /// Sorted distinct random keys (1–60 bytes).
    private static func sortedKeys(_ count: Int, _ generator: inout SeededGenerator) -> [[UInt8]] {
        var keys = Set<[UInt8]>()
        while keys.count < count { keys.insert(generator.bytes(Int.random(in: 1...60, using: &generator))) }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    private static func randomReference(_ generator: inout SeededGenerator) -> PageReference {
        PageReference(
            page: PageID(UInt64.random(in: 1...1_000_000, using: &generator)),
            birth: TransactionID(generator.next() >> 1))
    }

    /// A leaf filled until the page is exactly full: the last value takes the remaining bytes.
    private static func fullLeaf(pageSize: Int, _ generator: inout SeededGenerator) -> LeafNode {
        let keys = sortedKeys(400, &generator)
        let leaf = LeafNode()
        for key in keys {
            let value: LeafValue =
                Int.random(in: 0..<4, using: &generator) == 0
                ? .overflow(OverflowReference(index: randomReference(&generator), length: generator.next() >> 8))
                : .inline(generator.bytes(Int.random(in: 0...30, using: &generator)))
            if NodeLayout.leafEntryByteCount(key: key, value: value) > pageSize - leaf.byteCount { break }
            leaf.insert(key: key, value: value, at: leaf.keys.count)
        }
        let last = leaf.keys.count - 1
        let room = pageSize - leaf.byteCount
        leaf.replaceValue(at: last, with: .inline(generator.bytes(leaf.values[last].encodedByteCount + room)))
        return leaf
    }

    private static func encoded(_ leaf: LeafNode, pageSize: Int) -> PageBuffer {
        let page = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(leaf, into: page)
        page.seal(kind: .leaf, page: pageID, birth: TransactionID(5), count: leaf.keys.count)
        return page
    }

    private static func encoded(_ branch: BranchNode) -> PageBuffer {
        let page = PageBuffer(pageSize: 4096)
        NodeLayout.encode(branch, into: page)
        page.seal(kind: .branch, page: pageID, birth: TransactionID(5), count: branch.keys.count)
        return page
    }

    @Test(arguments: [4096, 16384])
    func aFullLeafEncodesAndDecodesToTheSameEntries(pageSize: Int) throws {
        var generator = SeededGenerator(seed: UInt64(pageSize))
        let leaf = Self.fullLeaf(pageSize: pageSize, &generator)
        #expect(leaf.byteCount == pageSize)
        let page = Self.encoded(leaf, pageSize: pageSize)
        try NodeLayout.validate(page, kind: .leaf)
        let decoded = NodeLayout.decodeLeaf(page)
        #expect(decoded.keys == leaf.keys)
        #expect(decoded.values == leaf.values)
        #expect(decoded.byteCount == leaf.byteCount)
        let view = LeafView(page: page)
        for (index, key) in leaf.keys.enumerated() {
            #expect(key.withUnsafeBytes { view.search($0) } == (index, true))
            let after = key + [0]  // sorts right after `key`, before the next key
            #expect(after.withUnsafeBytes { view.search($0) } == (index + 1, false))
        }
    }

    @Test func aBranchEncodesAndDecodesToTheSameKeysAndChildren() throws {
        var generator = SeededGenerator(seed: 21)
        let keys = Self.sortedKeys(60, &generator)
        let children = (0...keys.count).map { _ in Self.randomReference(&generator) }
        let page = Self.encoded(BranchNode(keys: keys, children: children))
        try NodeLayout.validate(page, kind: .branch)
        let decoded = NodeLayout.decodeBranch(page)
        #expect(decoded.keys == keys)
        #expect(decoded.children == children)
        let view = BranchView(page: page)
        for _ in 0..<200 {
            let probe =
                Int.random(in: 0..<3, using: &generator) == 0
                ? keys.randomElement(using: &generator)! : generator.bytes(Int.random(in: 1...8, using: &generator))
            let expected = keys.filter { !probe.lexicographicallyPrecedes($0) }.count  // separators ≤ probe
            #expect(probe.withUnsafeBytes { view.childIndex(for: $0) } == expected)
        }
    }

    @Test func validateRejectsLeafOffsetsAndLengthsOutsideThePage() {
        var generator = SeededGenerator(seed: 3)
        let keys = Self.sortedKeys(10, &generator)
        let leaf = LeafNode(keys: keys, values: keys.map { _ in .inline(generator.bytes(20)) })
        let firstEntry = LeafView(page: Self.encoded(leaf, pageSize: 4096)).entryOffset(0)
        let damages: [(String, (PageBuffer) -> Void)] = [
            ("offset past the end", { $0.bytes.storeLittleEndian(UInt16(0xFFFF), at: NodeLayout.leafOffsetsStart) }),
            (
                "offset inside the offset array",
                { $0.bytes.storeLittleEndian(UInt16(NodeLayout.leafOffsetsStart), at: NodeLayout.leafOffsetsStart + 2) }
            ),
            ("offset inside the header", { $0.bytes.storeLittleEndian(UInt16(2), at: NodeLayout.leafOffsetsStart) }),
            ("key running past the end", { $0.bytes.storeLittleEndian(UInt16(4090), at: firstEntry) }),
            (
                "inline value running past the end",
                { $0.bytes.storeLittleEndian(UInt32(0x7FFF_FFFF), at: firstEntry + 2) }
            ),
            ("empty key", { $0.bytes.storeLittleEndian(UInt16(0), at: firstEntry) }),
            (
                "entry count larger than the page",
                { $0.bytes.storeLittleEndian(UInt16(3000), at: PageHeader.countOffset) }
            ),
        ]
        for (name, damage) in damages {
            let page = Self.encoded(leaf, pageSize: 4096)
            damage(page)
            expectMalformed(page: Self.pageID, "a leaf with \(name)") { try NodeLayout.validate(page, kind: .leaf) }
        }
    }

    @Test func validateRejectsBranchOffsetsOutsideThePageAndMissingChildren() {
        var generator = SeededGenerator(seed: 4)
        let keys = Self.sortedKeys(5, &generator)
        let branch = BranchNode(keys: keys, children: (0...keys.count).map { _ in Self.randomReference(&generator) })
        let firstEntry = Int(
            Self.encoded(branch).readOnly.loadLittleEndian(at: NodeLayout.branchOffsetsStart, as: UInt16.self))
        let damages: [(String, (PageBuffer) -> Void)] = [
            ("offset past the end", { $0.bytes.storeLittleEndian(UInt16(4095), at: NodeLayout.branchOffsetsStart) }),
            (
                "offset inside the first child",
                {
                    $0.bytes.storeLittleEndian(
                        UInt16(NodeLayout.branchFirstChildOffset), at: NodeLayout.branchOffsetsStart)
                }
            ),
            ("key running past the end", { $0.bytes.storeLittleEndian(UInt16(4080), at: firstEntry) }),
        ]
        for (name, damage) in damages {
            let page = Self.encoded(branch)
            damage(page)
            expectMalformed(page: Self.pageID, "a branch with \(name)") { try NodeLayout.validate(page, kind: .branch) }
        }
        let childless = Self.encoded(BranchNode(keys: [], children: [.none]))
        expectMalformed(page: Self.pageID, "a branch without children") {
            try NodeLayout.validate(childless, kind: .branch)
        }
    }
}

@Suite("Key order")
struct KeyOrderTests {
    @Test func compareAgreesWithLexicographicOrderOnRandomBytes() {
        var generator = SeededGenerator(seed: 0x0DE7)
        let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
        func randomKey() -> [UInt8] {
            let count = Int.random(in: 0...24, using: &generator)
            if Bool.random(using: &generator) { return generator.bytes(count) }
            return (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
        }
        for _ in 0..<20_000 {
            let left = randomKey()
            var right = randomKey()
            if Int.random(in: 0..<4, using: &generator) == 0 {
                right = left + right.prefix(Int.random(in: 0...2, using: &generator))
            }
            let expected = left == right ? 0 : (left.lexicographicallyPrecedes(right) ? -1 : 1)
            #expect(KeyOrder.compare(left, right) == expected, "\(left) vs \(right)")
            #expect(KeyOrder.compare(right, left) == -expected)
            // The same bytes at unaligned addresses.
            let shift = Int.random(in: 1...7, using: &generator)
            let padded = [UInt8](repeating: 0xAA, count: shift) + left
            let unaligned = padded.withUnsafeBytes { raw in
                KeyOrder.compare(UnsafeRawBufferPointer(rebasing: raw[shift...]), right)
            }
            #expect(unaligned == expected)
        }
    }
}

// MARK: - IO: the fault-injecting file

@Suite("Fault-injecting file")
struct FaultInjectingFileTests {
    private func read(_ file: FaultInjectingFile, _ count: Int, at offset: UInt64) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        return Array(buffer.prefix(got))
    }

    private func write(_ file: FaultInjectingFile, _ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try file.write($0, at: offset) }
    }

    @Test func writesAreVisibleAtOnceButDurableOnlyAfterASync() throws {
        let file = FaultInjectingFile(image: [9, 9, 9, 9])
        try write(file, [1, 2, 3], at: 10)
        #expect(try read(file, 3, at: 10) == [1, 2, 3])
        #expect(try read(file, 20, at: 8) == [0, 0, 1, 2, 3])
        #expect(file.visibleImage == [9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 1, 2, 3])
        #expect(file.durableImage == [9, 9, 9, 9])
        #expect(file.pendingOperationCount == 1)
        #expect(try file.byteCount() == 13)
        try file.synchronize()
        #expect(file.durableImage == file.visibleImage)
        #expect(file.pendingOperationCount == 0)
        #expect(file.syncCount == 1)
        try file.truncate(to: 2)
        #expect(file.visibleImage == [9, 9])
        #expect(file.durableImage.count == 13)
    }

    @Test func aCrashImageWithNothingPendingIsTheDurableImage() throws {
        let file = FaultInjectingFile(image: bytes("durable contents"))
        try write(file, bytes("synced"), at: 3)
        try file.synchronize()
        for seed in 0..<50 {
            var generator = SeededGenerator(seed: UInt64(seed))
            #expect(file.crashImage(using: &generator) == file.durableImage)
        }
        #expect(file.durableImage == bytes("dursyncedontents"))
    }

    @Test func aCrashImageHoldsEachPendingByteOldOrNew() throws {
        var generator = SeededGenerator(seed: 5)
        let old = generator.bytes(4096)
        let new = generator.bytes(2048)
        let file = FaultInjectingFile(image: old)
        try write(file, new, at: 1024)
        var sawApplied = false
        var sawDropped = false
        var sawTorn = false
        for seed in 0..<100 {
            var crashGenerator = SeededGenerator(seed: UInt64(seed))
            let image = file.crashImage(using: &crashGenerator)
            #expect(image.count == old.count)
            #expect(image[..<1024] == old[..<1024] && image[3072...] == old[3072...])
            var foreignByteCount = 0
            for index in 0..<2048 where image[1024 + index] != new[index] && image[1024 + index] != old[1024 + index] {
                foreignByteCount += 1
            }
            #expect(foreignByteCount == 0, "seed \(seed)")
            if image == file.visibleImage {
                sawApplied = true
            } else if image == old {
                sawDropped = true
            } else {
                sawTorn = true
            }
        }
        #expect(sawApplied && sawDropped && sawTorn)
    }

    @Test func failedSyncsThrowAndKeepWritesPending() throws {
        let file = FaultInjectingFile()
        file.failSyncs(2)
        try write(file, [1], at: 0)
        for _ in 0..<2 {
            #expect(throws: IOError(operation: "fdatasync", path: "memory", code: IOError.injectedFailureCode)) {
                try file.synchronize()
            }
            #expect(file.pendingOperationCount == 1)
            #expect(file.durableImage == [])
        }
        try file.synchronize()
        #expect(file.durableImage == [1])
        #expect(file.syncCount == 1)
        #expect(!file.hasCrashed)
    }

    @Test(arguments: [0, 1, 3, 7])
    func aCrashStrikesAfterTheGivenNumberOfOperations(operations: Int) throws {
        let file = FaultInjectingFile()
        file.crash(afterOperations: operations)
        // Writes, syncs and truncations count; reads do not.
        func operation(_ step: Int) throws {
            _ = try read(file, 4, at: 0)
            switch step % 3 {
            case 0: try write(file, [UInt8](repeating: UInt8(step + 1), count: 8), at: UInt64(step * 8))
            case 1: try file.synchronize()
            default: try file.truncate(to: UInt64(step * 8))
            }
        }
        for step in 0..<operations { try operation(step) }
        #expect(!file.hasCrashed)
        let visible = file.visibleImage
        let pending = file.pendingOperationCount
        #expect(
            throws: IOError(
                operation: ["pwrite", "fdatasync", "ftruncate"][operations % 3], path: "memory",
                code: IOError.injectedFailureCode)
        ) {
            try operation(operations)
        }
        #expect(file.hasCrashed)
        // The operation that crashed changed nothing, and every later call throws.
        #expect(file.visibleImage == visible)
        #expect(file.pendingOperationCount == pending)
        #expect(throws: IOError.self) { _ = try read(file, 1, at: 0) }
        #expect(throws: IOError.self) { try write(file, [1], at: 0) }
        #expect(throws: IOError.self) { try file.synchronize() }
        #expect(throws: IOError.self) { try file.truncate(to: 0) }
        #expect(file.visibleImage == visible)
    }

    /// The documentation says a crashed file throws from every later call.
    @Test func byteCountThrowsAfterACrash() throws {
        let file = FaultInjectingFile()
        file.crash(afterOperations: 0)
        #expect(throws: IOError.self) { try write(file, [1], at: 0) }
        #expect(throws: IOError.self) { _ = try file.byteCount() }
    }
}

// MARK: - Pager: the page cache

@Suite("Page cache")
struct PageCacheTests {
    private static func page(_ id: UInt64, birth: UInt64, pageSize: Int = 4096) -> PageBuffer {
        let page = PageBuffer(pageSize: pageSize)
        page.bytes.storeLittleEndian(birth, at: PageHeader.byteCount)
        page.seal(kind: .leaf, page: PageID(id), birth: TransactionID(birth))
        return page
    }

    private static func reference(_ id: UInt64, _ birth: UInt64) -> PageReference {
        PageReference(page: PageID(id), birth: TransactionID(birth))
    }

    @Test func aCachedPageIsReturnedOnlyForItsOwnBirth() {
        let cache = PageCache(pageCapacity: 16)
        let first = Self.page(5, birth: 3)
        cache.insert(first)
        #expect(cache.page(Self.reference(5, 3)) === first)
        #expect(cache.page(Self.reference(5, 4)) == nil)
        #expect(cache.page(Self.reference(6, 3)) == nil)
        let reused = Self.page(5, birth: 4)
        cache.insert(reused)
        #expect(cache.page(Self.reference(5, 3)) == nil)
        #expect(cache.page(Self.reference(5, 4)) === reused)
    }

    @Test func randomUseNeverReturnsAPageOfAnotherBirthOrAStaleCopy() {
        var generator = SeededGenerator(seed: 0xCAC4E)
        let cache = PageCache(pageCapacity: 16)
        var newest: [UInt64: PageBuffer] = [:]
        var hits = 0
        for _ in 0..<20_000 {
            let id = UInt64.random(in: 1...40, using: &generator)
            let birth = UInt64.random(in: 1...4, using: &generator)
            if Bool.random(using: &generator) {
                let page = Self.page(id, birth: birth)
                cache.insert(page)
                newest[id] = page
            } else if let found = cache.page(Self.reference(id, birth)) {
                hits += 1
                #expect(found.pageID == PageID(id) && found.birth == TransactionID(birth))
                #expect(found === newest[id], "page \(id): a copy older than the newest insert was returned")
            }
            #expect(cache.count <= 16)
        }
        #expect(hits > 100)
    }

    @Test func pageFileReadsTheReusedPageInsteadOfTheCachedOldOne() throws {
        let pageSize = 4096
        let file = FaultInjectingFile(image: [UInt8](repeating: 0, count: 8 * pageSize))
        let pageFile = PageFile(file: file, pageSize: pageSize, cache: PageCache(pageCapacity: 16))
        try pageFile.write([Self.page(5, birth: 3)])
        let old = try pageFile.read(Self.reference(5, 3), kind: .leaf, pageCount: 8)
        #expect(old.birth == TransactionID(3))
        try pageFile.write([Self.page(5, birth: 4)])
        let reused = try pageFile.read(Self.reference(5, 4), kind: .leaf, pageCount: 8)
        #expect(reused.birth == TransactionID(4))
        #expect(reused.readOnly.loadLittleEndian(at: PageHeader.byteCount, as: UInt64.self) == 4)
        #expect(
            throws: StoreError.pageBirthMismatch(page: PageID(5), expected: TransactionID(3), found: TransactionID(4))
        ) {
            _ = try pageFile.read(Self.reference(5, 3), kind: .leaf, pageCount: 8)
        }
        #expect(throws: StoreError.pageOutOfRange(page: PageID(8), pageCount: 8)) {
            _ = try pageFile.read(Self.reference(8, 4), kind: .leaf, pageCount: 8)
        }
    }
}

@Suite("Leaf and branch page validation")
struct NodePageValidationTests {
    private static func leaf(_ keys: [String], page: UInt64 = 9) -> PageBuffer {
        let buffer = PageBuffer(pageSize: 4096)
        NodeLayout.encode(LeafNode(keys: keys.map { Array($0.utf8) }, values: keys.map { .inline(Array("v-\($0)".utf8)) }), into: buffer)
        buffer.seal(kind: .leaf, page: PageID(page), birth: TransactionID(2), count: keys.count)
        return buffer
    }

    private static func branch(_ keys: [String], page: UInt64 = 9) -> PageBuffer {
        let buffer = PageBuffer(pageSize: 4096)
        let children = (0...keys.count).map { PageReference(page: PageID(UInt64(20 + $0)), birth: TransactionID(1)) }
        NodeLayout.encode(BranchNode(keys: keys.map { Array($0.utf8) }, children: children), into: buffer)
        buffer.seal(kind: .branch, page: PageID(page), birth: TransactionID(2), count: keys.count)
        return buffer
    }

    private static func reason(_ page: PageBuffer, _ kind: PageKind) -> String? {
        do {
            try NodeLayout.validate(page, kind: kind)
            return nil
        } catch StoreError.malformedPage(let damaged, let reason) {
            #expect(damaged == page.pageID)
            return reason
        } catch {
            Issue.record("unexpected \(error)")
            return "\(error)"
        }
    }

    @Test func pagesInKeyOrderPass() throws {
        try NodeLayout.validate(Self.leaf(["a", "ab", "b", "bcdefghijklmnopq", "c"]), kind: .leaf)
        try NodeLayout.validate(Self.leaf([]), kind: .leaf)
        try NodeLayout.validate(Self.branch(["k", "m", "mm", "z"]), kind: .branch)
    }

    /// The first pair of keys out of order is named, equal keys count as out of order, and a bad
    /// offset anywhere is reported before an order fault.
    @Test func theFirstPairOutOfOrderIsNamedAfterEveryOffsetChecksOut() {
        #expect(Self.reason(Self.leaf(["a", "c", "b", "d"]), .leaf) == "keys 1 and 2 are out of order")
        #expect(Self.reason(Self.leaf(["a", "b", "b"]), .leaf) == "keys 1 and 2 are out of order")
        #expect(Self.reason(Self.leaf(["b", "a", "d", "c"]), .leaf) == "keys 0 and 1 are out of order")
        #expect(Self.reason(Self.leaf(["ab", "a"]), .leaf) == "keys 0 and 1 are out of order")
        #expect(Self.reason(Self.branch(["m", "k"]), .branch) == "keys 0 and 1 are out of order")
        let both = Self.leaf(["a", "c", "b", "d"])
        both.bytes.storeLittleEndian(UInt16(4090), at: NodeLayout.leafOffsetsStart + 2 * 3)
        #expect(Self.reason(both, .leaf) == "entry 3 runs past the page end")
        let early = Self.leaf(["a", "c", "b", "d"])
        early.bytes.storeLittleEndian(UInt16(2), at: NodeLayout.leafOffsetsStart + 2 * 3)
        #expect(Self.reason(early, .leaf) == "entry 3 offset 2 is out of range")
    }
}
