// Crafted pages with valid checksums: cycles, shared children, keys out of order, impossible counts.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// The first collection branch of the fixture's `alpha` tree (its root, above every leaf).
private func alphaRoot(_ fixture: DamageFixture) throws -> PageID {
    try #require(fixture.pages.collections["alpha"]?.first { $0.kind == .branch }?.reference.page)
}

/// Reads of `key` in `collection` through a fresh read transaction.
private func value(_ store: Store, _ key: String, in collection: String) throws -> [UInt8]? {
    let reader = try store.beginRead()
    defer { reader.close() }
    return try reader.value(forKey: bytes(key), in: collection)
}

/// A full scan of `collection`, which must fail.
private func scanError(_ store: Store, _ collection: String) -> (any Error)? {
    #expect(throws: StoreError.self) {
        let reader = try store.beginRead()
        defer { reader.close() }
        try reader.scan(collection, range: .all, reverse: false) { _, _ in true }
    }
}

@Suite("Crafted trees")
struct CraftedTreeTests {
    @Test func branchWhoseFirstChildIsItselfFailsGetScanWriteAndVerify() throws {
        let fixture = try DamageFixture()
        let branch = try alphaRoot(fixture)
        try PageCrafting.edit(fixture.path, page: branch, pageSize: fixture.pageSize) { bytes in
            bytes.storeReference(PageCrafting.reference(of: bytes), at: NodeLayout.branchFirstChildOffset)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        // alpha-0 sorts first, so its lookup takes child 0: the cycle.
        expectDamage(#expect(throws: StoreError.self) { try value(store, "alpha-0", in: "alpha") }, naming: branch)
        expectDamage(scanError(store, "alpha"), naming: branch)
        expectDamage(#expect(throws: StoreError.self) { try store.write { try $0.put(bytes("alpha-0"), bytes("x"), in: "alpha") } }, naming: branch)
        #expect(try value(store, "beta-1", in: "beta") == bytes("beta 1"), "other collections stay readable")
        let report = try store.verify()
        #expect(report.problems.contains { $0.contains("\(branch) is damaged") && $0.contains("reached twice") }, "\(report.problems)")
    }

    @Test func branchListingTheSameChildTwiceFailsScanAndVerify() throws {
        let fixture = try DamageFixture()
        let branch = try alphaRoot(fixture)
        var firstChild = PageReference.none
        try PageCrafting.edit(fixture.path, page: branch, pageSize: fixture.pageSize) { bytes in
            firstChild = UnsafeRawBufferPointer(bytes).loadReference(at: NodeLayout.branchFirstChildOffset)
            bytes.storeReference(firstChild, at: PageCrafting.childOffset(bytes, 1))
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        // The scan would otherwise return the first leaf's entries twice, out of order.
        expectDamage(scanError(store, "alpha"), naming: firstChild.page)
        let report = try store.verify()
        #expect(report.problems.contains { $0.contains("\(firstChild.page) is damaged") && $0.contains("reached twice") }, "\(report.problems)")
    }

    @Test func childrenSwappedAcrossTheirSeparatorFailScanAndVerify() throws {
        let fixture = try DamageFixture()
        let branch = try alphaRoot(fixture)
        try PageCrafting.edit(fixture.path, page: branch, pageSize: fixture.pageSize) { bytes in
            let first = UnsafeRawBufferPointer(bytes).loadReference(at: PageCrafting.childOffset(bytes, 0))
            let second = UnsafeRawBufferPointer(bytes).loadReference(at: PageCrafting.childOffset(bytes, 1))
            bytes.storeReference(second, at: PageCrafting.childOffset(bytes, 0))
            bytes.storeReference(first, at: PageCrafting.childOffset(bytes, 1))
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        let error = scanError(store, "alpha")
        #expect((error as? StoreError)?.isDamage == true, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("outside the separators"))
        let report = try store.verify()
        #expect(report.problems.contains { $0.contains("outside the separators") }, "\(report.problems)")
    }

    @Test func leafWithKeysOutOfOrderIsDamage() throws {
        let fixture = try DamageFixture()
        let leaf = fixture.pages.pages(of: "alpha", kind: .leaf)[3]
        try PageCrafting.edit(fixture.path, page: leaf, pageSize: fixture.pageSize) { bytes in
            let first: UInt16 = bytes.loadLittleEndian(at: NodeLayout.leafOffsetsStart)
            let second: UInt16 = bytes.loadLittleEndian(at: NodeLayout.leafOffsetsStart + 2)
            bytes.storeLittleEndian(second, at: NodeLayout.leafOffsetsStart)
            bytes.storeLittleEndian(first, at: NodeLayout.leafOffsetsStart + 2)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        expectDamage(scanError(store, "alpha"), naming: leaf)
        try expectVerifyNames(leaf, in: store)
    }
}

@Suite("Crafted chains")
struct CraftedChainTests {
    @Test func overflowIndexChainLoopingBackIsDamageNotAnEndlessWalk() throws {
        let fixture = try DamageFixture()
        let indexPages = fixture.pages.pages(of: "blobs", kind: .overflowIndex)
        try #require(indexPages.count >= 2)
        var first = PageReference.none
        try PageCrafting.edit(fixture.path, page: indexPages[0], pageSize: fixture.pageSize) { bytes in
            first = PageCrafting.reference(of: bytes)
        }
        try PageCrafting.edit(fixture.path, page: indexPages[indexPages.count - 1], pageSize: fixture.pageSize) { bytes in
            bytes.storeReference(first, at: Overflow.nextIndexOffset)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        expectDamage(#expect(throws: StoreError.self) { try value(store, "big", in: "blobs") }, naming: indexPages[0])
        #expect(try value(store, "small", in: "blobs") == bytes("small value"))
        try expectVerifyNames(indexPages[0], in: store)
    }

    @Test func overflowLengthBeyondTheFileIsDamageNotAHugeAllocation() throws {
        let fixture = try DamageFixture()
        let leaf = try #require(fixture.pages.pages(of: "blobs", kind: .leaf).first)
        let index = fixture.pages.pages(of: "blobs", kind: .overflowIndex)[0]
        try PageCrafting.edit(fixture.path, page: leaf, pageSize: fixture.pageSize) { bytes in
            let view = LeafView(page: try Self.buffer(bytes))
            let position = try #require((0..<view.count).first { Array(view.key(at: $0)) == Array("big".utf8) })
            let entry = view.entryOffset(position)
            let keyCount = Int(bytes.loadLittleEndian(at: entry, as: UInt16.self))
            let lengthOffset = entry + NodeLayout.leafEntryHeaderByteCount + keyCount + PageReference.byteCount
            bytes.storeLittleEndian(UInt64(1) << 62, at: lengthOffset)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        expectDamage(#expect(throws: StoreError.self) { try value(store, "big", in: "blobs") }, naming: index)
        try expectVerifyNames(index, in: store)
    }

    @Test func listChunkWithNoEntriesIsDamageNotAnEndlessWalk() throws {
        let fixture = try DamageFixture()
        let chunk = fixture.pages.listChunks[0]
        try PageCrafting.edit(fixture.path, page: chunk, pageSize: fixture.pageSize) { bytes in
            bytes.storeLittleEndian(UInt16(0), at: PageHeader.countOffset)
            bytes.storeReference(PageCrafting.reference(of: bytes), at: PageList.nextOffset)
        }
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        try expectVerifyNames(chunk, in: store)
    }

    @Test func listChunkChainLoopingBackIsDamageNotAnEndlessWalk() throws {
        let fixture = try DamageFixture()
        let chunks = fixture.pages.listChunks
        var first = PageReference.none
        try PageCrafting.edit(fixture.path, page: chunks[0], pageSize: fixture.pageSize) { first = PageCrafting.reference(of: $0) }
        // The last chunk of the newest root's first list (its successor is none) points back.
        let store = try Store.open(at: fixture.path)
        let last = try Self.lastChunkOfFirstList(store)
        try store.close()
        try PageCrafting.edit(fixture.path, page: last, pageSize: fixture.pageSize) { bytes in
            bytes.storeReference(first, at: PageList.nextOffset)
        }
        let reopened = try Store.open(at: fixture.path)
        defer { try? reopened.close() }
        try expectVerifyNames(chunks[0], in: reopened)
    }

    @Test func listCountsBeyondTheFileAreDamageNotAHugeAllocation() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-crafted")
        let store = try Store.create(at: directory.file("lists.chrono"))
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let snapshot = try store.snapshot
        let reader = SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount)
        let head = snapshot.state.head
        for count in [1 << 50, -1, Int.max] {
            let list = ListDescriptor(count: count, firstChunk: head)
            expectDamage(#expect(throws: StoreError.self) { try PageList.read(list, owner: nil, inlineOffset: 0, reader: reader) }, naming: head.page)
        }
    }

    @Test func pageNumberWhoseOffsetOverflowsIsOutOfRange() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-crafted")
        let store = try Store.create(at: directory.file("offset.chrono"))
        defer { try? store.close() }
        let page = PageID(UInt64(1) << 62)
        #expect(throws: StoreError.pageOutOfRange(page: page, pageCount: .max)) {
            try store.pageFile.readUncached(page, pageCount: .max)
        }
    }

    static func buffer(_ bytes: UnsafeMutableRawBufferPointer) throws -> PageBuffer {
        let buffer = PageBuffer(uninitializedPageSize: bytes.count)
        buffer.bytes.copyMemory(from: UnsafeRawBufferPointer(bytes))
        return buffer
    }

    private static func lastChunkOfFirstList(_ store: Store) throws -> PageID {
        let snapshot = try store.snapshot
        let reader = SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount)
        let root = try LoadedRoot(snapshot.state.head, reader: reader)
        let list = try #require([root.record.invalidated, root.record.introduced].first { !$0.isInline })
        var last = PageID.none
        try PageList.forEachChunk(list, reader: reader) { last = $0.pageID }
        return last
    }
}

@Suite("Crafted state records")
struct CraftedStateTests {
    /// Crafts the newest state page, then checks that decoding it fails naming the page and that
    /// opening reports damage.
    private func expectStateRejected(_ edit: (UnsafeMutableRawBufferPointer) -> Void, reason: String) throws {
        let fixture = try DamageFixture()
        let state = fixture.pages.state
        try PageCrafting.edit(fixture.path, page: state, pageSize: fixture.pageSize) { edit($0) }
        let file = try PosixFile(path: fixture.path, create: false, readOnly: true)
        let pageFile = PageFile(file: file, pageSize: fixture.pageSize, cache: PageCache(pageCapacity: 16))
        let page = try pageFile.readUncached(state, pageCount: .max)
        let error = #expect(throws: StoreError.self) { try StateRecord.decode(page) }
        expectDamage(error, naming: state)
        #expect("\(String(describing: error))".contains(reason))
        // The fixture's older slot names a state whose pages the newest commit reused, so no
        // slot verifies: opening reports damage instead of trapping or walking forever.
        #expect(throws: StoreError.noValidHeaderSlot(path: fixture.path)) { try Store.open(at: fixture.path) }
    }

    @Test func hugePageCountIsDamageNotAnArithmeticTrap() throws {
        try expectStateRejected({ $0.storeLittleEndian(UInt64(1) << 60, at: StateRecord.pageCountOffset) }, reason: "page count")
    }

    @Test func moreFreePagesThanPagesIsDamageNotAnUnderflow() throws {
        try expectStateRejected({ bytes in
            let pageCount: UInt64 = bytes.loadLittleEndian(at: StateRecord.pageCountOffset)
            bytes.storeLittleEndian(pageCount, at: StateRecord.freePageCountOffset)
        }, reason: "free pages")
    }

    @Test func stateNamingItselfAsPreviousIsDamageNotAnEndlessRecovery() throws {
        try expectStateRejected({ bytes in
            bytes.storeReference(PageCrafting.reference(of: bytes), at: StateRecord.previousOffset)
        }, reason: "is not older")
    }
}

@Suite("Retention limits")
struct RetentionLimitTests {
    @Test func retentionBeyondTheLimitsIsATypedErrorWhenCreatingOrSetting() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-retention")
        let path = directory.file("retention.chrono")
        #expect(throws: StoreError.invalidRetention("days:106751991168")) {
            try Store.create(at: path, options: StoreOptions(retention: .days(106_751_991_168)))
        }
        #expect(!RawFile.exists(path))
        let store = try Store.create(at: path, options: StoreOptions(retention: .days(RetentionPolicy.maximumDays)))
        defer { try? store.close() }
        #expect(throws: StoreError.invalidRetention("last:\(1 << 41)")) { try store.setRetention(.lastRoots(1 << 41)) }
        #expect(throws: StoreError.invalidRetention("days:-1")) { try store.setRetention(.days(-1)) }
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        #expect(try store.snapshot.state.retention == .days(RetentionPolicy.maximumDays))
    }

    @Test func hugeRetentionOnDiskIsClampedSoCommitsStillWork() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-retention")
        let path = directory.file("retention.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .days(30)))
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let state = try store.snapshot.stateReference.page
        let pageSize = store.pageSize
        try store.close()
        try PageCrafting.edit(path, page: state, pageSize: pageSize) { bytes in
            bytes.storeLittleEndian(UInt64.max, at: StateRecord.retentionParameterOffset)
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try reopened.snapshot.state.retention == .days(RetentionPolicy.maximumDays))
        try reopened.write { try $0.put(bytes("k2"), bytes("v2"), in: "c") }
        #expect(try reopened.read { try $0.value(forKey: bytes("k"), in: "c") } == bytes("v"))
    }
}

@Suite("Fuzzer findings")
struct FuzzerFindingTests {
    /// Found by the structure fuzzer: a free-tree key shorter than its 16 bytes trapped the next
    /// commit, which reads the release transaction from the key's first 8 bytes.
    @Test func freeTreeKeyShorterThanItsIdsDoesNotTrapTheNextCommit() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-fuzz-finding")
        let path = directory.file("short-key.chrono")
        let store = try Store.create(at: path, options: StoreOptions(durability: .deferred, retention: .lastRoots(1)))
        // Commits that free more pages than the state journal holds (deferred: none is reusable
        // before a checkpoint), so the free tree has pages.
        for round in 0..<12 {
            try store.write { transaction in
                for index in 0..<60 { try transaction.put(bytes("k\(index)"), [UInt8](repeating: UInt8(round), count: 3000), in: "c") }
            }
        }
        let snapshot = try store.snapshot
        let reader = SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount)
        var leaf = snapshot.state.freeTree
        try #require(!leaf.isNone)
        while case .branchPage(let view) = try reader.node(leaf) { leaf = view.child(at: 0) }
        let pageSize = store.pageSize
        try store.close()
        try PageCrafting.edit(path, page: leaf.page, pageSize: pageSize) { bytes in
            let entry = Int(bytes.loadLittleEndian(at: NodeLayout.leafOffsetsStart, as: UInt16.self))
            bytes.storeLittleEndian(UInt16(3), at: entry)
        }
        #expect(IndexKey.first(of: UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        do {
            try reopened.write { try $0.put(bytes("after"), bytes("crafted"), in: "c") }
        } catch is StoreError {
            // A typed error is an acceptable answer to a crafted page; a trap is not.
        }
    }

    /// Found by the structure fuzzer: a history entry whose parent is itself made `history()`
    /// (and any walk up the history parents) loop forever.
    /// The entry is crafted where it lies: in the state page's journal (a new store's recent
    /// commits), or in a history index leaf (right after a commit wrote a full journal out).
    @Test(arguments: [true, false]) func historyEntryNamingItselfAsParentIsDamageNotAnEndlessWalk(inJournal: Bool) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-fuzz-finding")
        let path = directory.file("parent-cycle.chrono")
        let store = try Store.create(at: path)
        for round in 0..<3 { try store.write { try $0.put(bytes("k"), bytes("v\(round)"), in: "c") } }
        if !inJournal {
            for round in 3..<200 where try !store.snapshot.state.journal.historyIndex.isEmpty {
                try store.write { try $0.put(bytes("k"), bytes("v\(round)"), in: "c") }
            }
        }
        let snapshot = try store.snapshot
        let head = snapshot.state.head.birth
        let pageSize = store.pageSize
        let damaged: PageID
        if inJournal {
            damaged = snapshot.stateReference.page
            try store.close()
            try PageCrafting.edit(path, page: damaged, pageSize: pageSize) { bytes in
                let found = PageCrafting.editJournaledHistoryEntry(bytes, root: head) { $0.storeLittleEndian(head.rawValue, at: 16) }
                try #require(found)
            }
        } else {
            #expect(snapshot.state.journal.historyIndex.isEmpty)
            let reader = SnapshotReader(pageFile: store.pageFile, pageCount: snapshot.state.pageCount)
            var leaf = snapshot.state.historyIndex
            while case .branchPage(let view) = try reader.node(leaf) { leaf = view.child(at: view.keyCount) }
            damaged = leaf.page
            try store.close()
            try PageCrafting.edit(path, page: leaf.page, pageSize: pageSize) { bytes in
                let view = LeafView(page: try CraftedChainTests.buffer(bytes))
                let position = try #require((0..<view.count).first { HistoryIndex.root(of: view.key(at: $0)) == head })
                let valueStart = view.entryOffset(position) + NodeLayout.leafEntryHeaderByteCount + view.key(at: position).count
                bytes.storeLittleEndian(head.rawValue, at: valueStart + 16)
            }
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        expectDamage(#expect(throws: StoreError.self) { try reopened.history() }, naming: damaged)
        #expect(!(try reopened.verify().isSound))
    }

    /// Crafts the newest state of a store with some history, reopens it, and runs `operation`.
    private func withCraftedState(
        _ edit: (UnsafeMutableRawBufferPointer) -> Void, _ operation: (Store) throws -> Void
    ) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-fuzz-finding")
        let path = directory.file("counts.chrono")
        let store = try Store.create(at: path)
        for round in 0..<8 { try store.write { try $0.put(bytes("k\(round % 2)"), [UInt8](repeating: 2, count: 5000), in: "c") } }
        let state = try store.snapshot.stateReference.page
        let pageSize = store.pageSize
        try store.close()
        try PageCrafting.edit(path, page: state, pageSize: pageSize) { edit($0) }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        let error = #expect(throws: StoreError.self) { try operation(reopened) }
        #expect(error?.isDamage == true, "\(String(describing: error))")
    }

    /// Found by the structure fuzzer: pruning more roots than the state records trapped on a
    /// negative count.
    @Test func pruningMoreRootsThanTheStateRecordsIsDamageNotATrap() throws {
        try withCraftedState({ $0.storeLittleEndian(UInt64(0), at: StateRecord.retainedCountOffset) }) { store in
            try store.setRetention(.lastRoots(1))
            _ = try store.prune()
        }
    }

    /// Found by the structure fuzzer: a commit that reuses more free pages than the state
    /// records trapped on an unsigned underflow.
    @Test func reusingMoreFreePagesThanTheStateRecordsIsDamageNotATrap() throws {
        try withCraftedState({ $0.storeLittleEndian(UInt64(0), at: StateRecord.freePageCountOffset) }) { store in
            try store.write { try $0.put(bytes("k0"), [UInt8](repeating: 3, count: 5000), in: "c") }
        }
    }

    /// Found by the structure fuzzer: a catalog entry count at its maximum trapped the next put
    /// that added a key.
    @Test func collectionCountAtItsMaximumIsDamageNotATrap() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-fuzz-finding")
        let path = directory.file("catalog.chrono")
        let store = try Store.create(at: path)
        try store.write { try $0.put(bytes("k"), bytes("v"), in: "c") }
        let catalog = try store.snapshot.head.catalog
        let pageSize = store.pageSize
        try store.close()
        try PageCrafting.edit(path, page: catalog.page, pageSize: pageSize) { bytes in
            let view = LeafView(page: try CraftedChainTests.buffer(bytes))
            let valueStart = view.entryOffset(0) + NodeLayout.leafEntryHeaderByteCount + view.key(at: 0).count
            bytes.storeLittleEndian(UInt64.max, at: valueStart + PageReference.byteCount)
        }
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        let error = #expect(throws: StoreError.self) { try reopened.write { try $0.put(bytes("k2"), bytes("v2"), in: "c") } }
        expectDamage(error, naming: catalog.page)
    }
}
