// Damage to one page or header field of a store file: typed errors naming the page, nothing else lost.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// Collection → key → value.
typealias DamageContents = [String: [[UInt8]: [UInt8]]]

/// Where the pages reachable from one committed state live, found through the engine's readers.
struct LivePages {
    var state: PageID
    var root: PageID
    /// The list-chunk pages of the head root's invalidated and introduced lists.
    var listChunks: [PageID]
    /// Each collection's pages in walk order (nodes top-down, a value's overflow pages in order).
    var collections: [String: [(reference: PageReference, kind: PageKind)]]
    /// The keys each collection leaf holds.
    var leafKeys: [PageID: Set<[UInt8]>] = [:]

    init(_ store: Store) throws {
        let snapshot = try store.snapshot
        let reader = SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount)
        state = snapshot.stateReference.page
        root = snapshot.state.head.page
        listChunks = try LoadedRoot(snapshot.state.head, reader: reader).metadataPages(reader: reader).dropFirst().map(\.page)
        let catalog = BTree(root: snapshot.head.catalog, owner: .history)
        var roots: [String: PageReference] = [:]
        try catalog.scan(.all, reverse: false, reader: reader) { key, value in
            roots[String(decoding: key, as: UTF8.self)] = try CollectionEntry.decode(value, page: catalog.root.page).root
            return true
        }
        collections = [:]
        for (name, treeRoot) in roots {
            var pages: [(reference: PageReference, kind: PageKind)] = []
            try TreePages.forEach(in: treeRoot, reader: reader) { reference, kind in pages.append((reference, kind)) }
            collections[name] = pages
            for (reference, kind) in pages where kind == .leaf {
                guard case .leafPage(let view) = try reader.node(reference) else { continue }
                leafKeys[reference.page] = Set((0..<view.count).map { Array(view.key(at: $0)) })
            }
        }
    }

    func pages(of collection: String, kind: PageKind) -> [PageID] {
        (collections[collection] ?? []).filter { $0.kind == kind }.map(\.reference.page)
    }
}

/// A store file with several collections, a two-level tree, a 4 MiB value in overflow pages,
/// and a newest commit that replaced that value, touching thousands of pages so its root's
/// page lists spill into list-chunk pages.
struct DamageFixture {
    static let bigByteCount = 4 << 20

    let directory: TemporaryDirectory
    let path: String
    let pageSize: Int
    /// The contents of the newest commit, and of the one before it.
    let newest: DamageContents
    let previous: DamageContents
    let newestRoot: TransactionID
    let pages: LivePages

    /// Builds the store; with `closeCleanly` false the store is dropped without ``Store/close()``.
    init(closeCleanly: Bool = true) throws {
        directory = try TemporaryDirectory(prefix: "chrono-damage")
        path = directory.file("damage.chrono")
        var generator = SeededGenerator(seed: 0xDA3A6E)
        var contents: DamageContents = [:]
        let store = try Store.create(at: path)
        pageSize = store.pageSize
        try store.write(label: "alpha") { transaction in
            for index in 0..<3000 {
                let key = bytes("alpha-\(index)")
                let value = bytes("alpha value \(index) " + String(repeating: "a", count: index % 50))
                try transaction.put(key, value, in: "alpha")
                contents["alpha", default: [:]][key] = value
            }
        }
        try store.write(label: "beta and gamma") { transaction in
            for index in 0..<300 {
                try transaction.put(bytes("beta-\(index)"), bytes("beta \(index)"), in: "beta")
                contents["beta", default: [:]][bytes("beta-\(index)")] = bytes("beta \(index)")
            }
            for index in 0..<5 {
                try transaction.put(bytes("gamma-\(index)"), bytes("gamma \(index)"), in: "gamma")
                contents["gamma", default: [:]][bytes("gamma-\(index)")] = bytes("gamma \(index)")
            }
        }
        let firstBig = generator.bytes(Self.bigByteCount)
        try store.write(label: "first big value") { transaction in
            try transaction.put(bytes("big"), firstBig, in: "blobs")
            try transaction.put(bytes("small"), bytes("small value"), in: "blobs")
        }
        contents["blobs"] = [bytes("big"): firstBig, bytes("small"): bytes("small value")]
        try store.write { try $0.put(bytes("beta-0"), bytes("beta 0 updated"), in: "beta") }
        contents["beta"]![bytes("beta-0")] = bytes("beta 0 updated")
        previous = contents

        let secondBig = generator.bytes(Self.bigByteCount)
        let (_, root) = try store.write(label: "second big value") { try $0.put(bytes("big"), secondBig, in: "blobs") }
        contents["blobs"]![bytes("big")] = secondBig
        newest = contents
        newestRoot = try #require(root)
        pages = try LivePages(store)
        if closeCleanly { try store.close() }
    }

    /// The store's contents, read key by key; reads that throw are returned instead.
    static func readEachKey(
        _ store: Store, expected: DamageContents
    ) throws -> (values: DamageContents, failures: [(collection: String, key: [UInt8], error: any Error)]) {
        let reader = try store.beginRead()
        defer { reader.close() }
        var values: DamageContents = [:]
        var failures: [(collection: String, key: [UInt8], error: any Error)] = []
        for (collection, entries) in expected {
            for key in entries.keys {
                do {
                    values[collection, default: [:]][key] = try reader.value(forKey: key, in: collection)
                } catch {
                    failures.append((collection, key, error))
                }
            }
        }
        return (values, failures)
    }

    /// Every entry of every collection, by scanning.
    static func scanAll(_ store: Store) throws -> DamageContents {
        let reader = try store.beginRead()
        defer { reader.close() }
        var result: DamageContents = [:]
        for name in try reader.collectionNames() {
            try reader.scan(name, range: .all, reverse: false) { key, value in
                result[name, default: [:]][key] = value
                return true
            }
        }
        return result
    }

    /// Checks that the file's own page header agrees on the page's kind, then damages its body.
    func damage(_ page: PageID, expectedKind: PageKind) throws {
        let kinds = try RawFile.pageKinds(path, pageSize: pageSize)
        try #require(Int(page.rawValue) < kinds.count)
        #expect(kinds[Int(page.rawValue)] == expectedKind.rawValue, "page header kind of \(page)")
        try RawFile.flipByte(in: path, at: page.rawValue * UInt64(pageSize) + UInt64(PageHeader.byteCount + 1000))
    }
}

/// The differences between two contents, briefly (values can be megabytes long).
func contentDifferences(_ found: DamageContents, _ expected: DamageContents) -> [String] {
    var differences: [String] = []
    for name in Set(found.keys).union(expected.keys).sorted() {
        let (have, want) = (found[name] ?? [:], expected[name] ?? [:])
        for key in Set(have.keys).union(want.keys) where have[key] != want[key] {
            let describe = { (value: [UInt8]?) in value.map { "\($0.count) bytes" } ?? "absent" }
            differences.append("\(name)/\(text(key) ?? ""): \(describe(have[key])), expected \(describe(want[key]))")
        }
    }
    return differences.sorted().prefix(10) + (differences.count > 10 ? ["… \(differences.count - 10) more"] : [])
}

/// Expects `error` to be a damage error naming `page`.
func expectDamage(_ error: (any Error)?, naming page: PageID, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let storeError = error as? StoreError else {
        Issue.record("expected a StoreError naming \(page), got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(storeError.isDamage, "\(storeError)", sourceLocation: sourceLocation)
    #expect(storeError.damagedPage == page, "\(storeError)", sourceLocation: sourceLocation)
}

/// Expects verify to report problems, every one of them naming `page` as damaged.
func expectVerifyNames(_ page: PageID, in store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let report = try store.verify()
    #expect(!report.isSound, "verify missed the damage to \(page)", sourceLocation: sourceLocation)
    #expect(report.problems.contains { $0.contains("\(page) is damaged") }, "\(report.problems)", sourceLocation: sourceLocation)
    #expect(report.problems.allSatisfy { $0.contains("\(page) is damaged") }, "\(report.problems)", sourceLocation: sourceLocation)
}

@Suite("Damaged pages")
struct DamagedPageTests {
    @Test func fixtureHasEveryPageKindWhereExpected() throws {
        let fixture = try DamageFixture()
        let kinds = try RawFile.pageKinds(fixture.path, pageSize: fixture.pageSize)
        #expect(kinds[Int(fixture.pages.state.rawValue)] == PageKind.state.rawValue)
        #expect(kinds[Int(fixture.pages.root.rawValue)] == PageKind.root.rawValue)
        #expect(fixture.pages.listChunks.count >= 4, "the newest root's lists should spill into chunks")
        for chunk in fixture.pages.listChunks { #expect(kinds[Int(chunk.rawValue)] == PageKind.listChunk.rawValue) }
        #expect(fixture.pages.collections["alpha"]?.first?.kind == .branch, "alpha should be a multi-level tree")
        #expect(fixture.pages.pages(of: "alpha", kind: .leaf).count > 10)
        #expect(fixture.pages.pages(of: "blobs", kind: .overflowIndex).count >= 2)
        #expect(fixture.pages.pages(of: "blobs", kind: .overflowData).count >= DamageFixture.bigByteCount / fixture.pageSize)
        for (_, pages) in fixture.pages.collections {
            for (reference, kind) in pages { #expect(kinds[Int(reference.page.rawValue)] == kind.rawValue) }
        }
    }

    @Test func damagedLeafFailsOnlyTheReadsOfItsKeys() throws {
        let fixture = try DamageFixture()
        let leaves = fixture.pages.pages(of: "alpha", kind: .leaf)
        let leaf = leaves[leaves.count / 2]
        let damagedKeys = try #require(fixture.pages.leafKeys[leaf])
        try #require(!damagedKeys.isEmpty)
        try fixture.damage(leaf, expectedKind: .leaf)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let (values, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(Set(failures.map(\.key)) == damagedKeys)
        #expect(failures.allSatisfy { $0.collection == "alpha" })
        for failure in failures { expectDamage(failure.error, naming: leaf) }
        var intact = fixture.newest
        for key in damagedKeys { intact["alpha"]![key] = nil }
        #expect(contentDifferences(values, intact) == [])
        do {
            let reader = try store.beginRead()
            defer { reader.close() }
            #expect(try reader.count(in: "alpha") == 3000)
            expectDamage(#expect(throws: StoreError.self) { try reader.scan("alpha") { _, _ in true } }, naming: leaf)
        }
        try expectVerifyNames(leaf, in: store)
    }

    @Test func damagedBranchFailsEveryReadBelowItAndNothingElse() throws {
        let fixture = try DamageFixture()
        let branch = try #require(fixture.pages.collections["alpha"]?.first { $0.kind == .branch }?.reference.page)
        try fixture.damage(branch, expectedKind: .branch)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let (values, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(failures.count == 3000)
        #expect(failures.allSatisfy { $0.collection == "alpha" })
        for failure in failures.prefix(20) { expectDamage(failure.error, naming: branch) }
        #expect(failures.allSatisfy { ($0.error as? StoreError)?.damagedPage == branch })
        var intact = fixture.newest
        intact["alpha"] = nil
        #expect(contentDifferences(values, intact) == [])
        do {
            let reader = try store.beginRead()
            defer { reader.close() }
            #expect(try reader.count(in: "alpha") == 3000, "the count lives in the catalog, not below the branch")
        }
        try expectVerifyNames(branch, in: store)
    }

    @Test func damagedOverflowIndexPageFailsOnlyItsValue() throws {
        let fixture = try DamageFixture()
        let indexPages = fixture.pages.pages(of: "blobs", kind: .overflowIndex)
        let index = indexPages[1]
        try fixture.damage(index, expectedKind: .overflowIndex)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let (values, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(failures.map(\.key) == [bytes("big")])
        for failure in failures { expectDamage(failure.error, naming: index) }
        var intact = fixture.newest
        intact["blobs"]![bytes("big")] = nil
        #expect(contentDifferences(values, intact) == [])
        try expectVerifyNames(index, in: store)
    }

    @Test func damagedOverflowDataPageFailsOnlyItsValue() throws {
        let fixture = try DamageFixture()
        let dataPages = fixture.pages.pages(of: "blobs", kind: .overflowData)
        let data = dataPages[dataPages.count / 2]
        try fixture.damage(data, expectedKind: .overflowData)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let (values, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(failures.map(\.key) == [bytes("big")])
        for failure in failures { expectDamage(failure.error, naming: data) }
        var intact = fixture.newest
        intact["blobs"]![bytes("big")] = nil
        #expect(contentDifferences(values, intact) == [])
        try expectVerifyNames(data, in: store)
    }

    @Test func damagedListChunkLeavesReadsIntactAndIsReportedByVerify() throws {
        let fixture = try DamageFixture()
        let chunk = fixture.pages.listChunks[fixture.pages.listChunks.count / 2]
        try fixture.damage(chunk, expectedKind: .listChunk)

        // A cleanly closed store opens without reading the newest root's lists.
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        #expect(contentDifferences(try DamageFixture.scanAll(store), fixture.newest) == [])
        try expectVerifyNames(chunk, in: store)
        // A commit that prunes the damaged root reads its lists, so it must fail naming the chunk;
        // a commit that retains the root succeeds, and verify goes on reporting the chunk.
        do {
            try store.write { try $0.put(bytes("after"), bytes("damage"), in: "gamma") }
            var expected = fixture.newest
            expected["gamma"]![bytes("after")] = bytes("damage")
            #expect(contentDifferences(try DamageFixture.scanAll(store), expected) == [])
            try expectVerifyNames(chunk, in: store)
        } catch let error as StoreError {
            expectDamage(error, naming: chunk)
            #expect(try store.snapshot.head.transaction == fixture.newestRoot)
            #expect(contentDifferences(try DamageFixture.scanAll(store), fixture.newest) == [])
        }
    }

    @Test func damagedMisdirectedWriteIsReportedAsAnIdentityMismatch() throws {
        let fixture = try DamageFixture()
        let leaves = fixture.pages.pages(of: "alpha", kind: .leaf)
        let (victim, intruder) = (leaves[1], fixture.pages.pages(of: "beta", kind: .leaf)[0])
        let damagedKeys = try #require(fixture.pages.leafKeys[victim])
        let size = UInt64(fixture.pageSize)
        let image = try RawFile.bytes(fixture.path)
        let intruderBytes = Array(image[Int(intruder.rawValue * size)..<Int((intruder.rawValue + 1) * size)])
        try RawFile.overwrite(in: fixture.path, at: victim.rawValue * size, with: intruderBytes)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let (_, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(Set(failures.map(\.key)) == damagedKeys)
        for failure in failures {
            #expect(failure.error as? StoreError == .pageIdentityMismatch(page: victim, found: intruder))
        }
        try expectVerifyNames(victim, in: store)
    }

    /// After a clean close both header slots name the newest state, so damage to its root or state
    /// page leaves no state to fall back to: open reports the header as unusable.
    @Test(arguments: [PageKind.root, .state])
    func damagedNewestRootOrStateAfterACleanCloseMakesOpenThrowNoValidHeaderSlot(kind: PageKind) throws {
        let fixture = try DamageFixture()
        let page = kind == .root ? fixture.pages.root : fixture.pages.state
        try fixture.damage(page, expectedKind: kind)
        let image = try RawFile.bytes(fixture.path)
        #expect(throws: StoreError.noValidHeaderSlot(path: fixture.path)) { try Store.open(at: fixture.path) }
        #expect(try RawFile.bytes(fixture.path) == image, "a failed open must write nothing")
    }

    /// Without a clean close the other slot still names the previous state, and open falls back to it.
    @Test(arguments: [PageKind.root, .state])
    func damagedNewestRootOrStateWithoutACleanCloseFallsBackToThePreviousCommit(kind: PageKind) throws {
        let fixture = try DamageFixture(closeCleanly: false)
        let page = kind == .root ? fixture.pages.root : fixture.pages.state
        try fixture.damage(page, expectedKind: kind)

        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        #expect(try store.snapshot.head.transaction.rawValue == fixture.newestRoot.rawValue - 1)
        #expect(contentDifferences(try DamageFixture.scanAll(store), fixture.previous) == [])
        let report = try store.verify()
        #expect(report.problems == [])
        try store.write { try $0.put(bytes("after"), bytes("fallback"), in: "gamma") }
        #expect(try store.verify().problems == [])
    }
}

@Suite("Damaged file header")
struct DamagedFileHeaderTests {
    @Test(arguments: [0, 1])
    func damagedHeaderSlotIsSkippedInFavourOfTheOther(slot: Int) throws {
        let fixture = try DamageFixture()
        try RawFile.flipByte(in: fixture.path, at: UInt64(HeaderSlot.offsets[slot] + 3))

        let store = try Store.open(at: fixture.path)
        #expect(try store.snapshot.head.transaction == fixture.newestRoot)
        #expect(contentDifferences(try DamageFixture.scanAll(store), fixture.newest) == [])
        #expect(try store.verify().problems == [])
        // Commits go on, and rewrite the damaged slot.
        try store.write { try $0.put(bytes("after"), bytes("slot damage"), in: "gamma") }
        try store.write { try $0.put(bytes("after"), bytes("slot damage again"), in: "gamma") }
        try store.close()
        let image = try RawFile.bytes(fixture.path)
        for offset in HeaderSlot.offsets {
            let slot = image.withUnsafeBytes { HeaderSlot.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            #expect(slot != nil, "slot at \(offset) should be valid again")
        }
        let reopened = try Store.open(at: fixture.path)
        defer { try? reopened.close() }
        let reader = try reopened.beginRead()
        defer { reader.close() }
        #expect(text(try reader.value(forKey: bytes("after"), in: "gamma")) == "slot damage again")
    }

    @Test func damagedBothHeaderSlotsMakeOpenThrowNoValidHeaderSlot() throws {
        let fixture = try DamageFixture()
        for offset in HeaderSlot.offsets { try RawFile.flipByte(in: fixture.path, at: UInt64(offset + 3)) }
        let image = try RawFile.bytes(fixture.path)
        let error = #expect(throws: StoreError.noValidHeaderSlot(path: fixture.path)) { try Store.open(at: fixture.path) }
        #expect(error?.isDamage == true)
        #expect(try RawFile.bytes(fixture.path) == image)
    }

    @Test(arguments: [0, FilePreamble.versionOffset, FilePreamble.pageSizeOffset + 1, FilePreamble.identifierOffset + 5,
                      FilePreamble.checksumOffset])
    func damagedPreambleMakesOpenThrowNotAStore(offset: Int) throws {
        let fixture = try DamageFixture()
        try RawFile.flipByte(in: fixture.path, at: UInt64(offset))
        let image = try RawFile.bytes(fixture.path)
        #expect(throws: StoreError.notAStore(path: fixture.path)) { try Store.open(at: fixture.path) }
        #expect(try RawFile.bytes(fixture.path) == image)
    }
}
