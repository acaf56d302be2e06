// Branch copy-on-write on bytes: an edit below a branch copies its page with one child pointer changed.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Branch edits on page bytes")
struct BranchBytesEditTests {
    /// The root page of `collection` as the newest root has it.
    private func collectionRoot(_ store: Store, _ collection: String) throws -> PageBuffer {
        let reader = try store.beginRead()
        defer { reader.close() }
        let entry = try #require(try reader.collectionEntry(named: collection))
        return try store.pageFile.read(entry.root, kind: nil, pageCount: reader.snapshot.state.pageCount)
    }

    @Test func aPutThatSplitsNothingCopiesTheBranchWithOnlyOneChildPointerChanged() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("branch.chrono"), options: StoreOptions(retention: .lastRoots(10)))
        defer { try? store.close() }
        var generator = SeededGenerator(seed: 1407)
        let keys = (0..<3000).map { _ in generator.bytes(24) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(100), in: "data") }
        }
        let before = try collectionRoot(store, "data")
        try #require(before.kindByte == PageKind.branch.rawValue, "the tree should have a branch root")
        // Same-size value: the leaf is copied as bytes and does not split.
        try store.write { try $0.put(keys[1234], generator.bytes(100), in: "data") }
        let after = try collectionRoot(store, "data")
        #expect(after.kindByte == PageKind.branch.rawValue)
        #expect(after.pageID != before.pageID)

        let old = BranchView(page: before)
        let new = BranchView(page: after)
        #expect(new.keyCount == old.keyCount)
        let changed = (0...old.keyCount).filter { new.child(at: $0) != old.child(at: $0) }
        #expect(changed.count == 1)
        // Every byte past the header is the old page's, except the 16 of that child pointer.
        let pointer = try #require(changed.first.map { old.childOffset(at: $0) })
        let pointerBytes = pointer..<pointer + PageReference.byteCount
        for offset in PageHeader.byteCount..<before.pageSize where !pointerBytes.contains(offset) {
            if after.readOnly[offset] != before.readOnly[offset] {
                Issue.record("byte \(offset) changed")
                break
            }
        }
        try NodeLayout.validate(after, kind: .branch)
        #expect(try store.verify().isSound)
    }

    @Test func scatteredPutsAndSplitsBelowBranchesHeldAsBytesMatchAModel() throws {
        let seed = SeededGenerator.seed()
        print("BranchBytesEditTests seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("model.chrono"), options: StoreOptions(retention: .lastRoots(3)))
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<12 {
            // Some rounds are many small puts (children split below branches kept as bytes),
            // others few scattered ones (only child pointers change).
            let count = round % 3 == 0 ? 2_000 : 60
            try store.write { transaction in
                for _ in 0..<count {
                    let key = model.isEmpty || Bool.random(using: &generator)
                        ? generator.bytes(Int.random(in: 4...40, using: &generator))
                        : model.keys.randomElement(using: &generator)!
                    let value = generator.bytes(Int.random(in: 0...200, using: &generator))
                    try transaction.put(key, value, in: "data")
                    model[key] = value
                }
            }
            let reader = try store.beginRead()
            #expect(try reader.count(in: "data") == model.count, "seed \(seed), round \(round)")
            var found: [[UInt8]: [UInt8]] = [:]
            try reader.scan("data") { key, value in
                found[key] = value
                return true
            }
            reader.close()
            #expect(found == model, "seed \(seed), round \(round)")
        }
        #expect(try store.verify().isSound)
    }
}
