// Bad input to open, create and write: a clear typed error, nothing written, nothing lost.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// A directory holding one small closed store, and the means to check that a file is untouched.
struct BadInputFixture {
    let directory: TemporaryDirectory
    let path: String

    /// A closed store with a few hundred entries over several commits; without `keepLock`, the
    /// lock file its creation left is removed so a test can see whether opening creates one.
    init(keepLock: Bool = false) throws {
        directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        for round in 0..<8 {
            try store.write(label: "round \(round)") { transaction in
                for index in 0..<100 {
                    try transaction.put(bytes("key-\(round)-\(index)"), bytes(String(repeating: "v", count: 100 + round)), in: "items")
                }
            }
        }
        try store.close()
        if !keepLock { try FileManager.default.removeItem(atPath: RawFile.lockPath(of: path)) }
    }

    /// Runs `attempt` (which must throw `expected`) and checks the file at `path` kept its bytes
    /// and, when `expectLock` is false, that no lock file appeared beside it.
    static func expectRejected(
        _ path: String, with expected: StoreError, expectLock: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation, _ attempt: () throws -> Void
    ) throws {
        let before = RawFile.exists(path) ? try RawFile.bytes(path) : nil
        #expect(throws: expected, sourceLocation: sourceLocation) { try attempt() }
        let after = RawFile.exists(path) ? try RawFile.bytes(path) : nil
        #expect(after == before, "the file at \(path) changed", sourceLocation: sourceLocation)
        if !expectLock {
            #expect(!RawFile.exists(RawFile.lockPath(of: path)), "a lock file was created", sourceLocation: sourceLocation)
        }
    }
}

@Suite("Bad input when opening")
struct BadOpenInputTests {
    @Test func missingPathThrowsStoreNotFoundAndCreatesNothing() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        let path = directory.file("missing.chrono")
        try BadInputFixture.expectRejected(path, with: .storeNotFound(path: path)) { _ = try Store.open(at: path) }
        #expect(!RawFile.exists(path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("text", bytes("Dear diary, today I stored nothing.\n") + bytes(String(repeating: "lorem ipsum ", count: 2000))),
        ("one byte", [0x89]),
        ("magic only with a wrong checksum", FilePreamble.magic + [UInt8](repeating: 0, count: 8192)),
    ])
    func fileThatIsNotAStoreThrowsNotAStore(name: String, contents: [UInt8]) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        let path = directory.file("\(name).chrono")
        try RawFile.write(path, contents)
        try BadInputFixture.expectRejected(path, with: .notAStore(path: path)) { _ = try Store.open(at: path) }
    }

    @Test(arguments: [30, FilePreamble.byteCount, 4096, 4096 + 1000, 8191])
    func storeCutShorterThanTwoPagesThrowsTruncatedStore(byteCount: Int) throws {
        let fixture = try BadInputFixture()
        try RawFile.write(fixture.path, Array(try RawFile.bytes(fixture.path).prefix(byteCount)))
        // Shorter than the preamble: the magic says "store", but its page size is unknown.
        let expectedAtLeast = UInt64(byteCount < FilePreamble.byteCount ? PageSize.minimum : 2 * 4096)
        try BadInputFixture.expectRejected(
            fixture.path,
            with: .truncatedStore(path: fixture.path, byteCount: UInt64(byteCount), expectedAtLeast: expectedAtLeast)
        ) { _ = try Store.open(at: fixture.path) }
    }

    /// Expects `error` to report the file at `path` as truncated to `byteCount` bytes.
    private func expectTruncated(
        _ error: StoreError?, path: String, byteCount: Int, expectedAtLeast: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .truncatedStore(let reportedPath, let reportedCount, let reportedNeed)? = error else {
            Issue.record("expected truncatedStore, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(reportedPath == path, sourceLocation: sourceLocation)
        #expect(reportedCount == UInt64(byteCount), sourceLocation: sourceLocation)
        #expect(reportedNeed > UInt64(byteCount), sourceLocation: sourceLocation)
        if let expectedAtLeast { #expect(reportedNeed == UInt64(expectedAtLeast), sourceLocation: sourceLocation) }
    }

    /// The file is cut just after the newest state and root pages, so open can read them and see
    /// from the state's allocation mark how much is missing. (The last commit's large value has
    /// root page lists long enough to need chunk pages, which are allocated after the state.)
    @Test func storeCutAfterItsNewestStateThrowsTruncatedStore() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        let path = directory.file("store.chrono")
        let store = try Store.create(at: path)
        var generator = SeededGenerator(seed: 11)
        for index in 0..<3 { try store.write { try $0.put(bytes("small-\(index)"), bytes("value"), in: "blobs") } }
        try store.write { try $0.put(bytes("big"), generator.bytes(2 << 20), in: "blobs") }
        let snapshot = try store.snapshot
        let lastNeeded = max(snapshot.stateReference.page.rawValue, snapshot.state.head.page.rawValue)
        try store.close()
        let image = try RawFile.bytes(path)
        let cut = Int(lastNeeded + 1) * store.pageSize
        try #require(cut < image.count, "the fixture should leave pages after the newest state")
        try RawFile.write(path, Array(image.prefix(cut)))
        let truncated = try RawFile.bytes(path)
        let error = #expect(throws: StoreError.self) { _ = try Store.open(at: path) }
        expectTruncated(error, path: path, byteCount: cut, expectedAtLeast: image.count)
        #expect(try RawFile.bytes(path) == truncated, "a failed open must write nothing")
    }

    /// Regression (found at 9cc843b): when the newest state page itself lay beyond the end of
    /// the cut file, open reported ``StoreError/noValidHeaderSlot(path:)`` ("the file header is
    /// damaged"), although both slots were intact and the file was merely truncated.
    @Test func storeCutToHalfItsLengthThrowsTruncatedStore() throws {
        let fixture = try BadInputFixture(keepLock: true)
        let image = try RawFile.bytes(fixture.path)
        let half = image.count / 2 / 4096 * 4096
        try RawFile.write(fixture.path, Array(image.prefix(half)))
        let truncated = try RawFile.bytes(fixture.path)
        let error = #expect(throws: StoreError.self) { _ = try Store.open(at: fixture.path) }
        expectTruncated(error, path: fixture.path, byteCount: half)
        #expect(try RawFile.bytes(fixture.path) == truncated, "a failed open must write nothing")
    }

    @Test func futureFormatVersionThrowsUnsupportedFormatVersion() throws {
        let fixture = try BadInputFixture()
        var image = try RawFile.bytes(fixture.path)
        image.withUnsafeMutableBytes { raw in
            raw.storeLittleEndian(UInt32(99), at: FilePreamble.versionOffset)
            let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<FilePreamble.checksumOffset]))
            raw.storeLittleEndian(checksum, at: FilePreamble.checksumOffset)
        }
        try RawFile.write(fixture.path, image)
        try BadInputFixture.expectRejected(fixture.path, with: .unsupportedFormatVersion(found: 99, supported: 5)) {
            _ = try Store.open(at: fixture.path)
        }
    }

    @Test func wrongRequestedPageSizeThrowsPageSizeMismatch() throws {
        let fixture = try BadInputFixture()
        try BadInputFixture.expectRejected(fixture.path, with: .pageSizeMismatch(stored: 4096, requested: 8192)) {
            _ = try Store.open(at: fixture.path, options: StoreOptions(pageSize: 8192))
        }
        // The right page size, or none, still opens it.
        let store = try Store.open(at: fixture.path, options: StoreOptions(pageSize: 4096))
        defer { try? store.close() }
        #expect(try store.beginRead().count(in: "items") == 800)
    }
}

@Suite("Bad input when creating")
struct BadCreateInputTests {
    @Test(arguments: [0, 1000, 2048, 4095, 4097, 12288, 131_072])
    func invalidPageSizeThrowsAndCreatesNothing(pageSize: Int) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        let path = directory.file("new.chrono")
        try BadInputFixture.expectRejected(path, with: .invalidPageSize(pageSize)) {
            _ = try Store.create(at: path, options: StoreOptions(pageSize: pageSize))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test func createOverAnExistingStoreThrowsStoreAlreadyExists() throws {
        let fixture = try BadInputFixture(keepLock: true)
        try BadInputFixture.expectRejected(fixture.path, with: .storeAlreadyExists(path: fixture.path), expectLock: true) {
            _ = try Store.create(at: fixture.path)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        #expect(try store.beginRead().count(in: "items") == 800)
    }

    @Test func createOverAnotherFileThrowsStoreAlreadyExists() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-bad-input")
        let path = directory.file("notes.txt")
        try RawFile.write(path, bytes("precious notes\n"))
        try BadInputFixture.expectRejected(path, with: .storeAlreadyExists(path: path)) { _ = try Store.create(at: path) }
        try BadInputFixture.expectRejected(path, with: .storeAlreadyExists(path: path)) {
            _ = try Store.create(at: path, options: StoreOptions(pageSize: 8192))
        }
    }
}

@Suite("Bad input when writing")
struct BadWriteInputTests {
    /// Runs a write that must fail with `expected`, after some valid edits in the same
    /// transaction, and checks that the store and its file are unchanged.
    private func expectWriteRejected(
        with expected: StoreError, label: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ edit: (WriteTransaction) throws -> Void
    ) throws {
        let fixture = try BadInputFixture(keepLock: true)
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let head = try store.snapshot.head.transaction
        let image = try RawFile.bytes(fixture.path)
        #expect(throws: expected, sourceLocation: sourceLocation) {
            try store.write(label: label) { transaction in
                try transaction.put(bytes("valid"), bytes("edit before the bad one"), in: "items")
                try edit(transaction)
            }
        }
        #expect(try RawFile.bytes(fixture.path) == image, "the file changed", sourceLocation: sourceLocation)
        #expect(try store.snapshot.head.transaction == head, sourceLocation: sourceLocation)
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(try reader.count(in: "items") == 800, sourceLocation: sourceLocation)
        #expect(try reader.value(forKey: bytes("valid"), in: "items") == nil, sourceLocation: sourceLocation)
        #expect(try reader.collectionNames() == ["items"], sourceLocation: sourceLocation)
        // The writer was released: the next valid write commits.
        try store.write { try $0.put(bytes("after"), bytes("ok"), in: "items") }
        #expect(try store.verify().problems == [], sourceLocation: sourceLocation)
    }

    @Test func emptyCollectionNameIsRejected() throws {
        try expectWriteRejected(with: .invalidCollectionName("")) { try $0.put(bytes("k"), bytes("v"), in: "") }
    }

    @Test func collectionNameOf256BytesIsRejected() throws {
        let name = String(repeating: "n", count: 256)
        try expectWriteRejected(with: .invalidCollectionName(name)) { try $0.put(bytes("k"), bytes("v"), in: name) }
    }

    @Test func collectionNameOf256BytesInFewerCharactersIsRejected() throws {
        let name = String(repeating: "é", count: 128)  // 128 characters, 256 bytes of UTF-8
        try expectWriteRejected(with: .invalidCollectionName(name)) { try $0.put(bytes("k"), bytes("v"), in: name) }
    }

    @Test func collectionNameOf255BytesIsAccepted() throws {
        let fixture = try BadInputFixture(keepLock: true)
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let name = String(repeating: "n", count: 255)
        try store.write { try $0.put(bytes("k"), bytes("v"), in: name) }
        let reader = try store.beginRead()
        defer { reader.close() }
        #expect(text(try reader.value(forKey: bytes("k"), in: name)) == "v")
    }

    @Test func invalidCollectionNamesAreRejectedByReadsAndOtherEdits() throws {
        let fixture = try BadInputFixture(keepLock: true)
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let long = String(repeating: "n", count: 256)
        for name in ["", long] {
            let reader = try store.beginRead()
            #expect(throws: StoreError.invalidCollectionName(name)) { try reader.value(forKey: bytes("k"), in: name) }
            #expect(throws: StoreError.invalidCollectionName(name)) { try reader.count(in: name) }
            reader.close()
        }
        try expectWriteRejected(with: .invalidCollectionName(long)) { try $0.delete(bytes("key-0-0"), in: long) }
        try expectWriteRejected(with: .invalidCollectionName("")) { try $0.dropCollection("") }
    }

    @Test func labelOver1024BytesIsRejected() throws {
        let label = String(repeating: "l", count: 1025)
        try expectWriteRejected(with: .labelTooLong(byteCount: 1025, limit: 1024), label: label) { _ in }
    }

    @Test func labelOver1024BytesInFewerCharactersIsRejected() throws {
        let label = String(repeating: "ü", count: 513)  // 513 characters, 1026 bytes of UTF-8
        try expectWriteRejected(with: .labelTooLong(byteCount: 1026, limit: 1024), label: label) { _ in }
    }

    @Test func labelOfExactly1024BytesIsKept() throws {
        let fixture = try BadInputFixture(keepLock: true)
        let store = try Store.open(at: fixture.path)
        let label = String(repeating: "l", count: 1024)
        try store.write(label: label) { try $0.put(bytes("k"), bytes("v"), in: "items") }
        try store.close()
        let reopened = try Store.open(at: fixture.path)
        defer { try? reopened.close() }
        #expect(try reopened.snapshot.head.label == label)
    }

    @Test func emptyAndOversizedKeysAreRejected() throws {
        try expectWriteRejected(with: .emptyKey) { try $0.put([], bytes("v"), in: "items") }
        let limit = NodeLayout.maximumKeyByteCount(pageSize: 4096)
        try expectWriteRejected(with: .keyTooLarge(byteCount: limit + 1, limit: limit)) {
            try $0.put([UInt8](repeating: 7, count: limit + 1), bytes("v"), in: "items")
        }
    }
}
