// Branch edits on bytes: a child pointer replaced on a copy of the page, and separators laid out without decoding.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
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
                if flags & BTree.branchLaidOutByEdit != 0 { forms.laidOut += 1 } else { forms.bytes += 1 }
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
        // 20,000 entries: about 1,100 leaves under about 17 branches. Scattered new keys overfill
        // some leaves, which are spread or split below branches that were committed.
        let branchesBefore = try branchCount(store, "c")
        let transaction = try store.beginWrite()
        // No branch is decoded for having taken its share of layouts: only a branch that splits.
        transaction.branchByteLayoutLimit = 127
        for _ in 0..<300 {
            let (key, value) = (generator.bytes(24), generator.bytes(150))
            try transaction.put(key, value, in: "c")
            model[key] = value
        }
        let forms = branchForms(transaction)
        #expect(forms.laidOut >= 3, "seed \(seed): \(forms)")
        for (key, value) in model { #expect(try transaction.value(forKey: key, in: "c") == value, "seed \(seed)") }
        try transaction.commit()
        // A branch that splits leaves two decoded halves.
        let splits = try branchCount(store, "c") - branchesBefore
        #expect(forms.decoded <= 2 * splits, "seed \(seed): \(forms), \(splits) branches split")
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
                // The mark says a separator edit laid it out; the other bits count them.
                let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
                let mark = BTree.branchLaidOutByEdit
                if flags & mark != 0, layouts.last != flags & ~mark { layouts.append(flags & ~mark) }
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

    private func branchCount(_ store: Store, _ collection: String) throws -> Int {
        try treePages(store, collection).values.filter { $0[PageHeader.kindOffset] == PageKind.branch.rawValue }.count
    }

    /// Every page of `collection`'s tree, by page number, as the newest root has it.
    private func treePages(_ store: Store, _ collection: String) throws -> [PageID: [UInt8]] {
        let reader = try store.beginRead()
        defer { reader.close() }
        let entry = try #require(try reader.collectionEntry(named: collection))
        var pages: [PageID: [UInt8]] = [:]
        func walk(_ reference: PageReference) throws {
            let page = try store.pageFile.read(reference, kind: nil, pageCount: reader.snapshot.state.pageCount)
            pages[reference.page] = Array(page.readOnly)
            guard page.kindByte == PageKind.branch.rawValue else { return }
            let view = BranchView(page: page)
            for child in 0...view.keyCount { try walk(view.child(at: child)) }
        }
        try walk(entry.root)
        return pages
    }

    /// The same transaction on two copies of a store, one settling leaves below branches in page
    /// form on their bytes and one decoding those branches (a layout limit of 0), leaves the same
    /// pages: the same page numbers, each with the same bytes. Long keys keep branches to a dozen
    /// separators or so, so separators inserted below committed branches and this transaction's
    /// byte copies split branches too; a small dirty page limit makes the transaction spill.
    @Test(arguments: [false, true])
    func branchesSettledAsBytesLeaveTheSamePagesAsDecodedBranches(spilling: Bool) throws {
        let seed = SeededGenerator.seed()
        print("BranchBytesEditTests same pages seed: \(seed) (spilling: \(spilling))")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let base = directory.file("base.chrono")
        var options = StoreOptions()
        if spilling { options.dirtyPageLimit = 64 }
        var keys: [[UInt8]] = []
        let store = try Store.create(at: base, options: options)
        for _ in 0..<6 {
            try store.write { transaction in
                for _ in 0..<150 {
                    let key = generator.bytes(Int.random(in: 150...400, using: &generator))
                    keys.append(key)
                    try transaction.put(key, generator.bytes(Int.random(in: 10...60, using: &generator)), in: "c")
                }
            }
        }
        try store.close()
        var branchesSplit = 0
        for round in 0..<12 {
            let operations: [(key: [UInt8], value: [UInt8]?)] = (0..<Int.random(in: 150...300, using: &generator)).map { _ in
                switch Int.random(in: 0..<20, using: &generator) {
                case 0: (keys.randomElement(using: &generator)!, nil)
                case 1, 2: (keys.randomElement(using: &generator)!, generator.bytes(Int.random(in: 10...200, using: &generator)))
                default: (generator.bytes(Int.random(in: 150...400, using: &generator)), generator.bytes(Int.random(in: 10...60, using: &generator)))
                }
            }
            var results: [[PageID: [UInt8]]] = []
            for limit in [BTree.defaultBranchByteLayoutLimit, 0] {
                let path = directory.file("round-\(round)-\(limit).chrono")
                try FileManager.default.copyItem(atPath: base, toPath: path)
                let copy = try Store.open(at: path, options: options)
                let before = try branchCount(copy, "c")
                let transaction = try copy.beginWrite()
                transaction.branchByteLayoutLimit = limit
                for operation in operations {
                    if let value = operation.value {
                        try transaction.put(operation.key, value, in: "c")
                    } else {
                        try transaction.delete(operation.key, in: "c")
                    }
                }
                try transaction.commit()
                let pages = try treePages(copy, "c")
                if limit == 0, try branchCount(copy, "c") > before {
                    branchesSplit += 1
                }
                results.append(pages)
                let report = try copy.verify()
                #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed) round \(round) limit \(limit): \(report)")
                try copy.close()
            }
            #expect(results[0].keys.sorted() == results[1].keys.sorted(), "seed \(seed) round \(round): other page numbers")
            let differing = results[0].keys.filter { results[0][$0] != results[1][$0] }
            #expect(differing.isEmpty, "seed \(seed) round \(round): pages \(differing.sorted()) differ")
        }
        #expect(branchesSplit >= 1, "seed \(seed): only \(branchesSplit) of 12 rounds split a branch")
    }
}
