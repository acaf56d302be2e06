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

    // MARK: - Separator edits on bytes

    /// A branch page of `keys` and `children`, its entries placed in key order (as the engine
    /// encodes) or in reverse (valid, but not as the engine lays pages out).
    private func branchPage(keys: [[UInt8]], children: [PageReference], reversed: Bool) -> PageBuffer {
        let page = PageBuffer(pageSize: 4096)
        if reversed {
            let bytes = page.bytes
            bytes.storeReference(children[0], at: NodeLayout.branchFirstChildOffset)
            var cursor = NodeLayout.branchOffsetsStart + 2 * keys.count
            for index in keys.indices.reversed() {
                bytes.storeLittleEndian(UInt16(cursor), at: NodeLayout.branchOffsetsStart + 2 * index)
                bytes.storeLittleEndian(UInt16(keys[index].count), at: cursor)
                for (offset, byte) in keys[index].enumerated() { bytes[cursor + 2 + offset] = byte }
                bytes.storeReference(children[index + 1], at: cursor + 2 + keys[index].count)
                cursor += NodeLayout.branchEntryByteCount(key: keys[index]) - 2
            }
        } else {
            NodeLayout.encode(BranchNode(keys: keys, children: children), into: page)
        }
        page.seal(kind: .branch, page: PageID(7), birth: TransactionID(3), count: keys.count)
        return page
    }

    @Test func aBranchEditLaysOutTheBytesTheDecodedBranchEncodesTo() throws {
        let seed = SeededGenerator.seed()
        print("BranchBytesEditTests layout seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        func reference() -> PageReference {
            PageReference(page: PageID(generator.next() % 1_000_000 + 1), birth: TransactionID(generator.next() % 1_000 + 1))
        }
        var compared = 0
        for trial in 0..<400 {
            let keyCount = Int.random(in: 1...90, using: &generator)
            let keys = (0..<keyCount).map { _ in generator.bytes(Int.random(in: 1...30, using: &generator)) }
            let children = (0...keyCount).map { _ in reference() }
            let page = branchPage(keys: keys, children: children, reversed: trial % 3 == 2)
            let node = NodeLayout.decodeBranch(page)
            let edit = BranchEdit(BranchView(page: page))
            // A few edits around one place, as settling a child makes them, and now and then far apart.
            let center = Int.random(in: 0...keyCount, using: &generator)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let spread = trial % 5 == 4 ? keyCount : 2
                let keyIndex = min(max(center + Int.random(in: -spread...spread, using: &generator), 0), node.keys.count)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    let child = reference()
                    node.setChild(child, at: keyIndex)
                    edit.setChild(child, at: keyIndex)
                case 1 where keyIndex < node.keys.count:
                    let key = generator.bytes(Int.random(in: 1...40, using: &generator))
                    node.replaceSeparator(at: keyIndex, with: key)
                    edit.replaceSeparator(at: keyIndex, with: key)
                default:
                    let (key, child) = (generator.bytes(Int.random(in: 1...40, using: &generator)), reference())
                    node.insert(separator: key, rightChild: child, at: keyIndex)
                    edit.insert(separator: key, rightChild: child, at: keyIndex)
                }
                #expect(edit.childCount == node.children.count, "seed \(seed) trial \(trial)")
                for index in 0..<node.children.count where edit.child(at: index) != node.children[index] {
                    Issue.record("seed \(seed) trial \(trial): child \(index) differs")
                    break
                }
            }
            #expect(edit.byteCount == node.byteCount, "seed \(seed) trial \(trial)")
            let decoded = edit.decoded()
            #expect(decoded.keys == node.keys && decoded.children == node.children, "seed \(seed) trial \(trial)")
            guard node.byteCount <= 4096 else { continue }
            let expected = PageBuffer(pageSize: 4096)
            NodeLayout.encode(node, into: expected)
            let laidOut = edit.laidOut(pageSize: 4096)
            #expect(Array(laidOut.readOnly) == Array(expected.readOnly), "seed \(seed) trial \(trial)")
            compared += 1
        }
        #expect(compared > 300)
    }

    /// The dirty branch pages of `transaction`: how many are held as bytes laid out by a
    /// separator edit, as bytes otherwise, and decoded.
    private func branchForms(_ transaction: WriteTransaction) -> (laidOut: Int, bytes: Int, decoded: Int) {
        var forms = (laidOut: 0, bytes: 0, decoded: 0)
        for page in transaction.dirty.values {
            switch page {
            case .raw(let buffer, .branch, _):
                let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
                if flags & 0x80 != 0 { forms.laidOut += 1 } else { forms.bytes += 1 }
            case .branch: forms.decoded += 1
            default: continue
            }
        }
        return forms
    }

    @Test func scatteredPutsThatSplitLeavesKeepTheirBranchesAsBytes() throws {
        let seed = SeededGenerator.seed()
        print("BranchBytesEditTests scattered splits seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.file("splits.chrono")
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try Store.create(at: path, options: StoreOptions())
        for _ in 0..<20 {
            try store.write { transaction in
                for _ in 0..<1_000 {
                    let (key, value) = (generator.bytes(24), generator.bytes(150))
                    try transaction.put(key, value, in: "c")
                    model[key] = value
                }
            }
        }
        // 20,000 entries: about 160 leaves under two levels of branches. Scattered new keys
        // overfill some leaves, which are spread or split below branches that were committed.
        let transaction = try store.beginWrite()
        for _ in 0..<300 {
            let (key, value) = (generator.bytes(24), generator.bytes(150))
            try transaction.put(key, value, in: "c")
            model[key] = value
        }
        let forms = branchForms(transaction)
        #expect(forms.decoded == 0, "seed \(seed): \(forms)")
        #expect(forms.laidOut >= 3, "seed \(seed): \(forms)")
        for (key, value) in model { #expect(try transaction.value(forKey: key, in: "c") == value, "seed \(seed)") }
        try transaction.commit()
        try store.close()
        let reopened = try Store.open(at: path, options: StoreOptions())
        defer { try? reopened.close() }
        let stored = try reopened.read { reader in
            var found: [[UInt8]: [UInt8]] = [:]
            try reader.scan("c") { key, value in
                found[key] = value
                return true
            }
            return found
        }
        #expect(stored == model, "seed \(seed)")
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report)")
    }

    @Test func aBranchTakesEightSeparatorLayoutsThenIsDecoded() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("limit.chrono"), options: StoreOptions())
        defer { try? store.close() }
        // Two leaves of ascending keys under a root branch; appends then split the right leaf
        // again and again, each split adding a separator to the root.
        try store.write { transaction in
            for index in 0..<60 { try transaction.put(Array("key-\(10_000 + index)".utf8), [UInt8](repeating: 1, count: 100), in: "c") }
        }
        let transaction = try store.beginWrite()
        var layouts: [UInt8] = []
        var next = 10_060
        while layouts.last != 0 && next < 12_000 {
            try transaction.put(Array("key-\(next)".utf8), [UInt8](repeating: 2, count: 100), in: "c")
            next += 1
            let root = try #require(try transaction.collectionEntry(named: "c")).root
            switch transaction.dirty[root.page] {
            case .raw(let buffer, .branch, _)?:
                // Bit 7: laid out by a separator edit; bits 0-6: how many so far.
                let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
                if flags & 0x80 != 0, layouts.last != flags & 0x7F { layouts.append(flags & 0x7F) }
            case .branch?:
                layouts.append(0)
            default:
                continue
            }
        }
        #expect(layouts == [1, 2, 3, 4, 5, 6, 7, 8, 0], "layout counts seen: \(layouts)")
        try transaction.commit()
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
        #expect(try store.read { try $0.count(in: "c") } == next - 10_000)
    }
}
