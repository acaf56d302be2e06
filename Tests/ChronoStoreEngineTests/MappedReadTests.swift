// Reads through the memory map: damage found while open, growth past a mapping, cut and regrown files.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Reads through a memory map")
struct MappedReadTests {
    @Test func aLeafDamagedWhileTheStoreIsOpenFailsItsFirstMappedReadNamingThePage() throws {
        let fixture = try DamageFixture()
        let store = try Store.open(at: fixture.path)
        defer { try? store.close() }
        // Map the file and verify some pages before the damage happens.
        let first = try store.read { try $0.value(forKey: bytes("beta-1"), in: "beta") }
        #expect(first == bytes("beta 1"))
        #expect(store.pageFile.mappedByteCount != nil)
        let leaves = fixture.pages.pages(of: "alpha", kind: .leaf)
        let leaf = leaves[leaves.count / 3]
        let damagedKeys = try #require(fixture.pages.leafKeys[leaf])
        try fixture.damage(leaf, expectedKind: .leaf)
        store.pageFile.cache.removeAll()

        let (values, failures) = try DamageFixture.readEachKey(store, expected: fixture.newest)
        #expect(Set(failures.map(\.key)) == damagedKeys)
        for failure in failures { expectDamage(failure.error, naming: leaf) }
        var intact = fixture.newest
        for key in damagedKeys { intact["alpha"]![key] = nil }
        #expect(contentDifferences(values, intact) == [])
    }

    @Test func mappedAndCopiedReadsSeeTheSameContents() throws {
        let fixture = try DamageFixture()
        var copying = StoreOptions()
        copying.memoryMappedReads = false
        let copied = try Store.open(at: fixture.path, options: copying)
        let copiedContents = try contents(of: copied)
        #expect(copied.pageFile.mappedByteCount == nil)
        try copied.close()
        let mapped = try Store.open(at: fixture.path)
        defer { try? mapped.close() }
        #expect(try contents(of: mapped) == copiedContents)
        #expect(try DamageFixture.scanAll(mapped) == fixture.newest)
    }

    @Test func readsFollowTheFilePastItsFirstMapping() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("grow.chrono"), options: StoreOptions(retention: .lastRoots(1)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 14)
        try store.write { transaction in
            for index in 0..<200 { try transaction.put(bytes("early-\(index)"), generator.bytes(100), in: "small") }
        }
        // The first mapping covers 64 MiB: a reader opened now maps the small file.
        let early = try store.beginRead()
        let earlyContents = try contents(of: early)
        #expect(store.pageFile.mappedByteCount == 64 << 20)
        // Grow the file well past 64 MiB with large values, then put small keys in leaves beyond it.
        let big = generator.bytes(1 << 20)
        for index in 0..<80 {
            try store.write { try $0.put(bytes("big-\(index)"), big, in: "large") }
        }
        var expectedLate: [[UInt8]: [UInt8]] = [:]
        try store.write { transaction in
            for index in 0..<500 {
                let value = generator.bytes(120)
                try transaction.put(bytes("late-\(index)"), value, in: "small")
                expectedLate[bytes("late-\(index)")] = value
            }
        }
        #expect(try store.pageFile.file.byteCount() > 80 << 20)
        // The old reader still reads its root through the old mapping.
        #expect(try contents(of: early) == earlyContents)
        early.close()
        let reader = try store.beginRead()
        defer { reader.close() }
        for (key, value) in expectedLate { #expect(try reader.value(forKey: key, in: "small") == value) }
        #expect(try reader.value(forKey: bytes("big-79"), in: "large") == big)
        #expect(try reader.count(in: "small") == 700)
        #expect(try store.verify().isSound)
        let mapped = try #require(store.pageFile.mappedByteCount)
        #expect(UInt64(mapped) >= (try store.pageFile.file.byteCount()), "the store should have mapped the grown file")
    }

    @Test func aFileCutByCompactionAndGrownAgainReadsItsNewPages() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("cut.chrono")
        let store = try Store.create(at: path, options: StoreOptions(retention: .lastRoots(1)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 1414)
        let keys = (0..<20_000).map { _ in generator.bytes(24) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(150), in: "data") }
        }
        try store.write { transaction in
            for key in keys[2_000...] { try transaction.delete(key, in: "data") }
        }
        // Every page of the head read (and verified) through the map, then the tail cut off.
        _ = try contents(of: store)
        let before = try store.pageFile.file.byteCount()
        _ = try store.compact()
        let after = try store.pageFile.file.byteCount()
        #expect(after < before / 2)
        // New pages land in the slots the cut removed: each must be read as what is there now.
        var expected: [[UInt8]: [UInt8]] = [:]
        let reader = try store.beginRead()
        for key in keys[..<2_000] { expected[key] = try reader.value(forKey: key, in: "data") }
        reader.close()
        try store.write { transaction in
            for key in keys[2_000...] {
                let value = generator.bytes(150)
                try transaction.put(key, value, in: "data")
                expected[key] = value
            }
        }
        #expect(try store.pageFile.file.byteCount() > after)
        #expect(try contents(of: store)["data"] == expected)
        #expect(try store.verify().isSound)

        // And a second handle, opened on the grown file, reads the same.
        try store.close()
        let reopened = try Store.open(at: path)
        defer { try? reopened.close() }
        #expect(try contents(of: reopened)["data"] == expected)
    }
}
