// Leaf copy-on-write on bytes: a page edited as bytes equals the page the decoded node encodes to.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite("Leaf edits on page bytes")
struct LeafBytesEditTests {
    /// A leaf page of `count` random entries (some large values as overflow references).
    private func randomLeaf(_ count: Int, pageSize: Int, generator: inout SeededGenerator) -> (LeafNode, PageBuffer) {
        var keys = Set<[UInt8]>()
        while keys.count < count { keys.insert(generator.bytes(Int.random(in: 1...12, using: &generator))) }
        let sorted = keys.sorted { KeyOrder.compare($0, $1) < 0 }
        let values: [LeafValue] = sorted.map { _ in randomValue(&generator) }
        let node = LeafNode(keys: sorted, values: values)
        let page = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(node, into: page)
        page.seal(kind: .leaf, page: PageID(7), birth: TransactionID(3), count: count)
        return (node, page)
    }

    private func randomValue(_ generator: inout SeededGenerator) -> LeafValue {
        if Int.random(in: 0..<8, using: &generator) == 0 {
            let index = PageReference(page: PageID(generator.next() % 1000 + 2), birth: TransactionID(generator.next() % 50 + 1))
            return .overflow(OverflowReference(index: index, length: generator.next() % 100_000))
        }
        return .inline(generator.bytes(Int.random(in: 0...30, using: &generator)))
    }

    /// A put into the leaf `node` (`view` its page): a random key and value, or (`replacing`) a
    /// new value under one of its keys; and where the put goes in the page.
    private func randomPut(
        into node: LeafNode, _ view: LeafView, replacing: Bool, generator: inout SeededGenerator
    ) -> (key: [UInt8], value: LeafValue, index: Int, found: Bool) {
        let key = replacing ? node.keys[Int.random(in: 0..<node.keys.count, using: &generator)]
            : generator.bytes(Int.random(in: 1...12, using: &generator))
        let value = randomValue(&generator)
        let (index, found) = key.withUnsafeBytes { view.search($0) }
        return (key, value, index, found)
    }

    @Test func insertingOrReplacingAsBytesGivesTheSamePageAsEditingTheDecodedNode() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let pageSize = 4096
        for _ in 0..<300 {
            let (node, page) = randomLeaf(Int.random(in: 0...60, using: &generator), pageSize: pageSize, generator: &generator)
            let view = LeafView(page: page)
            let replacing = !node.keys.isEmpty && Bool.random(using: &generator)
            let (key, value, index, found) = randomPut(into: node, view, replacing: replacing, generator: &generator)
            if found { node.replaceValue(at: index, with: value) } else { node.insert(key: key, value: value, at: index) }
            guard node.byteCount <= pageSize else { continue }
            let expected = PageBuffer(pageSize: pageSize)
            NodeLayout.encode(node, into: expected)
            expected.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
            let edited = PageBuffer(pageSize: pageSize)
            key.withUnsafeBytes { NodeLayout.encodeEdited(view, index: index, replacing: found, key: $0, value: value, into: edited) }
            edited.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
            #expect(Array(edited.readOnly) == Array(expected.readOnly), "seed \(seed)")
            #expect(LeafView(page: edited).count == node.keys.count)
            try NodeLayout.validate(edited, kind: .leaf)
        }
    }

    @Test func removingAsBytesGivesTheSamePageAsEditingTheDecodedNode() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests removal seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<300 {
            let (node, page) = randomLeaf(Int.random(in: 1...60, using: &generator), pageSize: 4096, generator: &generator)
            let index = Int.random(in: 0..<node.keys.count, using: &generator)
            node.remove(at: index)
            let expected = PageBuffer(pageSize: 4096)
            NodeLayout.encode(node, into: expected)
            expected.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
            let edited = PageBuffer(pageSize: 4096)
            NodeLayout.encodeRemoving(LeafView(page: page), index: index, into: edited)
            edited.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
            #expect(Array(edited.readOnly) == Array(expected.readOnly), "seed \(seed)")
        }
    }

    @Test func aDeleteFromACommittedLeafThatStaysAQuarterFullCopiesItsBytes() throws {
        let store = try Store.create(in: FaultInjectingFile(), options: StoreOptions())
        try store.write { transaction in
            // About 2,500 bytes: one leaf, more than a quarter full after one delete.
            for index in 0..<50 { try transaction.put(bytes("k\(index)"), bytes("value \(index)") + Array(repeating: 0x2E, count: 32), in: "c") }
        }
        try store.write { transaction in
            let existed = try transaction.delete(bytes("k10"), in: "c")
            #expect(existed)
            let raw = transaction.dirty.values.contains { if case .raw(_, .leaf, _) = $0 { true } else { false } }
            #expect(raw)
        }
        let (deleted, kept, count) = try store.read { reader in
            (try reader.value(forKey: bytes("k10"), in: "c"), try reader.value(forKey: bytes("k11"), in: "c"), try reader.count(in: "c"))
        }
        #expect(deleted == nil)
        #expect(text(kept) == "value 11" + String(repeating: ".", count: 32))
        #expect(count == 49)
        #expect(try store.verify().isSound)
    }

    @Test func aPutIntoACommittedLeafWritesItAsBytesAndReadsBack() throws {
        let store = try Store.create(in: FaultInjectingFile(), options: StoreOptions())
        try store.write { transaction in
            for index in 0..<50 { try transaction.put(bytes("k\(index)"), bytes("v\(index)"), in: "c") }
        }
        try store.write { transaction in
            try transaction.put(bytes("k10"), bytes("replaced"), in: "c")
            // The leaf's first edit in this transaction copies its bytes; it is not decoded.
            let raw = transaction.dirty.values.contains { if case .raw(_, .leaf, _) = $0 { true } else { false } }
            #expect(raw)
            // A second edit of the same leaf edits those bytes again (a few edits later, it is decoded).
            try transaction.put(bytes("k5a"), bytes("inserted"), in: "c")
        }
        let (replaced, inserted, count) = try store.read { reader in
            (try reader.value(forKey: bytes("k10"), in: "c"), try reader.value(forKey: bytes("k5a"), in: "c"),
             try reader.count(in: "c"))
        }
        #expect(text(replaced) == "replaced")
        #expect(text(inserted) == "inserted")
        #expect(count == 51)
        #expect(try store.verify().isSound)
    }

    /// One edit of a chain: remove entry `index`, or put `key` (replacing when `found`) at `index`.
    private enum ChainEdit {
        case remove(index: Int)
        case put(key: [UInt8], value: LeafValue, index: Int, found: Bool)
    }

    /// Random chains of inserts, replacements (values of new sizes) and removals, applied by
    /// `apply` to a leaf laid out by an edit (it returns the page now holding the leaf) and to the
    /// decoded node; after every step the page, header aside, must equal the page the node
    /// encodes to, zero tail included, be a valid leaf, and end where `apply` says (when it says).
    private func runEditChains(
        _ name: String, chains: Int, steps: Int, removalOdds: Int,
        apply: (PageBuffer, _ end: Int, ChainEdit) -> (page: PageBuffer, reportedEnd: Int?)
    ) throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests \(name) seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let pageSize = 4096
        for chain in 0..<chains {
            let (node, first) = randomLeaf(Int.random(in: 1...40, using: &generator), pageSize: pageSize, generator: &generator)
            // The chain starts from a committed page copied by an edit (removing its first entry).
            var page = PageBuffer(pageSize: pageSize)
            NodeLayout.encodeRemoving(LeafView(page: first), index: 0, into: page)
            node.remove(at: 0)
            page.bytes.storeLittleEndian(UInt16(node.keys.count), at: PageHeader.countOffset)
            for step in 0..<steps {
                let view = LeafView(page: page)
                let end = NodeLayout.canonicalLeafEnd(view)
                let edit: ChainEdit
                if node.keys.count > 1 && Int.random(in: 0..<removalOdds, using: &generator) == 0 {
                    let index = Int.random(in: 0..<node.keys.count, using: &generator)
                    node.remove(at: index)
                    edit = .remove(index: index)
                } else {
                    let replacing = !node.keys.isEmpty && Bool.random(using: &generator)
                    let key = replacing ? node.keys[Int.random(in: 0..<node.keys.count, using: &generator)]
                        : generator.bytes(Int.random(in: 1...12, using: &generator))
                    let value = randomValue(&generator)
                    let (index, found) = key.withUnsafeBytes { view.search($0) }
                    let before = node.byteCount
                    if found { node.replaceValue(at: index, with: value) } else { node.insert(key: key, value: value, at: index) }
                    guard node.byteCount <= pageSize else {
                        // Undo: the edit would not fit (the engine splits then).
                        if found { node.replaceValue(at: index, with: view.value(at: index)) } else { node.remove(at: index) }
                        #expect(node.byteCount == before)
                        continue
                    }
                    edit = .put(key: key, value: value, index: index, found: found)
                }
                let (next, reportedEnd) = apply(page, end, edit)
                page = next
                page.bytes.storeLittleEndian(UInt16(node.keys.count), at: PageHeader.countOffset)
                if let reportedEnd { #expect(reportedEnd == node.byteCount, "seed \(seed) chain \(chain) step \(step)") }
                #expect(NodeLayout.canonicalLeafEnd(LeafView(page: page)) == node.byteCount, "seed \(seed) chain \(chain) step \(step)")
                let expected = PageBuffer(pageSize: pageSize)
                NodeLayout.encode(node, into: expected)
                expected.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
                let sealed = PageBuffer(pageSize: pageSize)
                sealed.bytes.copyMemory(from: page.readOnly)
                sealed.bytes.storeLittleEndian(UInt8(0), at: PageHeader.flagsOffset)
                sealed.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: node.keys.count)
                #expect(Array(sealed.readOnly) == Array(expected.readOnly), "seed \(seed) chain \(chain) step \(step)")
                try NodeLayout.validate(sealed, kind: .leaf)
            }
        }
    }

    /// A leaf laid out by an edit is copied with another edit by block copies
    /// (``NodeLayout/encodeEditedCanonical`` and ``NodeLayout/encodeRemovingCanonical``).
    @Test func chainedEditsOfALeafLaidOutByAnEditGiveTheSamePageAsTheDecodedNode() throws {
        try runEditChains("chained", chains: 60, steps: 40, removalOdds: 4) { page, end, edit in
            let view = LeafView(page: page)
            let next = PageBuffer(uninitializedPageSize: page.bytes.count)
            switch edit {
            case .remove(let index):
                NodeLayout.encodeRemovingCanonical(view, end: end, index: index, into: next)
            case .put(let key, let value, let index, let found):
                key.withUnsafeBytes {
                    NodeLayout.encodeEditedCanonical(view, end: end, index: index, replacing: found, key: $0, value: value, into: next)
                }
            }
            return (next, nil)
        }
    }

    /// A dirty leaf is edited in its own buffer (``NodeLayout/editCanonicalInPlace`` and
    /// ``NodeLayout/removeCanonicalInPlace``), and each returns where the leaf now ends.
    @Test func chainedInPlaceEditsOfALeafGiveTheSamePageAsTheDecodedNode() throws {
        try runEditChains("in-place", chains: 80, steps: 60, removalOdds: 3) { page, end, edit in
            let newEnd: Int
            switch edit {
            case .remove(let index):
                newEnd = NodeLayout.removeCanonicalInPlace(page, end: end, index: index)
            case .put(let key, let value, let index, let found):
                newEnd = key.withUnsafeBytes {
                    NodeLayout.editCanonicalInPlace(page, end: end, index: index, replacing: found, key: $0, value: value)
                }
            }
            return (page, newEnd)
        }
    }

    /// A scan of a write transaction whose body edits the collection goes on from the last key it
    /// passed: deleting every key visited (and putting a key before it) visits each original
    /// key exactly once. Reading on in the pages it was reading, the scan skipped keys: a leaf
    /// edited in place shifts its later entries under it, and a leaf merged into its neighbour
    /// by the deletes takes its keys out of the branch the scan walks.
    @Test func aScanWhoseBodyEditsTheCollectionVisitsEachOriginalKeyOnce() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("scan-edit.chrono"), options: StoreOptions())
        defer { try? store.close() }
        let original = (0..<300).map { bytes(String(format: "k%04d", $0 * 2)) }
        let value = [UInt8](repeating: 7, count: 100)
        try store.write { transaction in
            for key in original { try transaction.put(key, value, in: "c") }
        }
        try store.write { transaction in
            // One put a leaf or so: each leaf this transaction holds is then bytes of its own,
            // which deletes would otherwise edit in place.
            for key in original.enumerated().filter({ $0.offset % 10 == 0 }).map(\.element) {
                try transaction.put(key, value, in: "c")
            }
            var visited: [[UInt8]] = []
            try transaction.scan("c") { key, _ in
                visited.append(key)
                if key.first == UInt8(ascii: "k") {
                    #expect(try transaction.delete(key, in: "c"))
                    try transaction.put(bytes("a") + key, bytes("moved"), in: "c")
                }
                return true
            }
            #expect(visited == original, "each original key once, in order")
            #expect(try transaction.count(in: "c") == 300)
        }
        #expect(try store.read { reader in try entries(reader, "c").map(\.0) } == original.map { bytes("a") + $0 })
        #expect(try store.verify().isSound)
    }

    /// The same cursor reversed, within bounds: deleting each key visited in a reverse scan of a
    /// bounded range visits every key of the range once, from the top, and stops when the body
    /// says so even after an edit.
    @Test func aReverseBoundedScanWhoseBodyDeletesVisitsEachKeyOfTheRangeOnce() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("reverse-edit.chrono"), options: StoreOptions())
        defer { try? store.close() }
        let keys = (0..<400).map { bytes(String(format: "k%04d", $0)) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, [UInt8](repeating: 3, count: 90), in: "c") }
        }
        try store.write { transaction in
            let range = KeyRange(lower: KeyBound(keys[50], inclusive: false), upper: KeyBound(keys[350], inclusive: true))
            var visited: [[UInt8]] = []
            try transaction.scan("c", range: range, reverse: true) { key, _ in
                visited.append(key)
                let deleted = try transaction.delete(key, in: "c")
                #expect(deleted)
                return true
            }
            #expect(visited == Array(keys[51...350].reversed()))
            var stopped: [[UInt8]] = []
            try transaction.scan("c") { key, _ in
                stopped.append(key)
                try transaction.put(key, bytes("edited"), in: "c")
                return stopped.count < 3
            }
            #expect(stopped == Array(keys[0..<3]))
            #expect(try transaction.count(in: "c") == 100)
        }
        #expect(try store.verify().isSound)
    }

    /// A transaction that dirties many leaves keeps at most about ``WriteTransaction/decodedLeafLimit``
    /// of them decoded: the rest are held as page bytes, edited in place. Reads inside the
    /// transaction, after commit and after reopening agree with a model; verify finds no damage.
    @Test func aLargeTransactionHoldsMostOfItsLeavesAsBytes() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests large transaction seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.file("large.chrono")
        // Encoding starts past an eighth of the dirty limit; the limit itself is never reached.
        let options = StoreOptions(dirtyPageLimit: 8_192)
        let store = try Store.create(at: path, options: options)
        var model: [[UInt8]: [UInt8]] = [:]
        let transaction = try store.beginWrite()
        for index in 0..<60_000 {
            let key = generator.bytes(16)
            let value = generator.bytes(Int.random(in: 100...200, using: &generator))
            try transaction.put(key, value, in: "c")
            model[key] = value
            if index % 5 == 0, let victim = model.keys.first {
                #expect(try transaction.delete(victim, in: "c"))
                model[victim] = nil
            }
        }
        var decoded = 0
        var bytesHeld = 0
        var unmarked = 0
        for page in transaction.dirty.values {
            switch page {
            case .leaf: decoded += 1
            case .raw(let buffer, .leaf, _):
                bytesHeld += 1
                // Marked for byte edits: the next put into it edits the bytes, not a decode.
                let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
                if flags & 0x80 == 0 { unmarked += 1 }
            default: continue
            }
        }
        #expect(unmarked == 0, "\(unmarked) of \(bytesHeld) leaves held as bytes are not open to byte edits")
        #expect(transaction.spilled.isEmpty)
        #expect(decoded + bytesHeld > 2 * WriteTransaction.decodedLeafLimit, "the test dirties enough leaves")
        #expect(decoded <= WriteTransaction.decodedLeafLimit + 64, "decoded \(decoded), as bytes \(bytesHeld)")
        #expect(try entries(transaction, "c").count == model.count, "seed \(seed)")
        try transaction.commit()
        try store.close()
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        let stored = try reopened.read { try entries($0, "c") }
        #expect(Dictionary(uniqueKeysWithValues: stored) == model, "seed \(seed)")
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "\(report)")
    }

    /// A leaf page that one put overfills, seen as runs of its bytes and the put's entry, gives
    /// every slice of its entries exactly as the decoded node with the put encodes them: the same
    /// sizes, keys and replaced value, and the same bytes for any range laid out.
    @Test func anOverfullLeafLaysOutAnySliceAsTheDecodedNodeWithThePut() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests overfull seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let pageSize = 4096
        for _ in 0..<300 {
            let (node, page) = randomLeaf(Int.random(in: 1...60, using: &generator), pageSize: pageSize, generator: &generator)
            let view = LeafView(page: page)
            let (key, value, index, found) = randomPut(
                into: node, view, replacing: Bool.random(using: &generator), generator: &generator)
            let overfull = OverfullLeaf(
                view: view, index: index, replacing: found, key: key, value: value,
                reference: PageReference(page: PageID(7), birth: TransactionID(3)), edits: 0)
            #expect(overfull.previous == (found ? node.values[index] : nil))
            if found { node.replaceValue(at: index, with: value) } else { node.insert(key: key, value: value, at: index) }
            #expect(overfull.count == node.keys.count, "seed \(seed)")
            #expect(overfull.byteCount == node.byteCount, "seed \(seed)")
            for entry in 0..<node.keys.count {
                #expect(overfull.size(entry) == NodeLayout.leafEntryByteCount(key: node.keys[entry], value: node.values[entry]))
                #expect(overfull.key(at: entry) == node.keys[entry], "seed \(seed)")
            }
            let lower = Int.random(in: 0..<node.keys.count, using: &generator)
            let upper = Int.random(in: (lower + 1)...node.keys.count, using: &generator)
            let slice = LeafNode(keys: Array(node.keys[lower..<upper]), values: Array(node.values[lower..<upper]))
            guard slice.byteCount <= pageSize else { continue }
            let expected = PageBuffer(pageSize: pageSize)
            NodeLayout.encode(slice, into: expected)
            expected.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: slice.keys.count)
            let laidOut = PageBuffer(pageSize: pageSize)
            #expect(NodeLayout.encode(overfull.runs(lower..<upper), into: laidOut) == slice.keys.count)
            laidOut.seal(kind: .leaf, page: PageID(9), birth: TransactionID(4), count: slice.keys.count)
            #expect(Array(laidOut.readOnly) == Array(expected.readOnly), "seed \(seed) slice \(lower)..<\(upper)")
        }
    }

    /// Puts that overfill leaves held as bytes (committed pages, and this transaction's own byte
    /// copies) split them, or share them with a neighbour, without decoding any: every dirty leaf
    /// is still bytes open to byte edits. Leaves stay at least 77 % full (the shares still run),
    /// reads inside the transaction, after commit and after reopening agree with a model, and
    /// verify finds no damage or leak.
    @Test func putsThatOverfillLeavesHeldAsBytesSettleThemWithoutDecoding() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests overfill seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.file("overfill.chrono")
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try Store.create(at: path, options: StoreOptions())
        for _ in 0..<40 {
            try store.write { transaction in
                for _ in 0..<100 {
                    let key = generator.bytes(16)
                    let value = generator.bytes(Int.random(in: 20...120, using: &generator))
                    try transaction.put(key, value, in: "c")
                    model[key] = value
                }
            }
        }
        let transaction = try store.beginWrite()
        for round in 0..<300 {
            // New keys, and replacements by larger values, spread over the leaves; a leaf is
            // edited at most a few times, so none reaches the byte-edit limit.
            if round % 3 == 0, let victim = model.keys.randomElement(using: &generator) {
                let value = generator.bytes(Int.random(in: 150...250, using: &generator))
                try transaction.put(victim, value, in: "c")
                model[victim] = value
            } else {
                let key = generator.bytes(16)
                let value = generator.bytes(Int.random(in: 20...120, using: &generator))
                try transaction.put(key, value, in: "c")
                model[key] = value
            }
        }
        var decoded = 0
        var bytesHeld = 0
        for page in transaction.dirty.values {
            switch page {
            case .leaf: decoded += 1
            case .raw(let buffer, .leaf, _):
                bytesHeld += 1
                let flags: UInt8 = buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
                #expect(flags & 0x80 != 0, "a leaf held as bytes is not open to byte edits")
            default: continue
            }
        }
        #expect(decoded == 0, "seed \(seed): \(decoded) leaves decoded, \(bytesHeld) held as bytes")
        #expect(bytesHeld > 60, "seed \(seed): the puts dirty many leaves (\(bytesHeld))")
        #expect(try entries(transaction, "c").count == model.count, "seed \(seed)")
        for (key, value) in model { #expect(try transaction.value(forKey: key, in: "c") == value, "seed \(seed)") }
        try transaction.commit()
        let fill = try census(store, collection: "c").fill(pageSize: 4096)
        #expect(fill >= 0.77, "seed \(seed): leaf fill \(fill)")
        try store.close()
        let reopened = try Store.open(at: path, options: StoreOptions())
        defer { try? reopened.close() }
        let stored = try reopened.read { try entries($0, "c") }
        #expect(Dictionary(uniqueKeysWithValues: stored) == model, "seed \(seed)")
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed): \(report)")
    }

    /// Each branch's separators and each leaf's keys, depth first in key order, read from the file.
    private struct TreeShape: Equatable {
        var separators: [[[UInt8]]] = []
        var leaves: [[[UInt8]]] = []
    }

    private func treeShape(_ store: Store, _ collection: String) throws -> TreeShape {
        let reader = try store.beginRead()
        defer { reader.close() }
        let entry = try #require(try reader.collectionEntry(named: collection))
        var shape = TreeShape()
        func walk(_ reference: PageReference) throws {
            let page = try store.pageFile.read(reference, kind: nil, pageCount: reader.snapshot.state.pageCount)
            if page.kindByte == PageKind.branch.rawValue {
                let view = BranchView(page: page)
                shape.separators.append((0..<view.keyCount).map { Array(view.key(at: $0)) })
                for child in 0...view.keyCount { try walk(view.child(at: child)) }
            } else {
                let view = LeafView(page: page)
                shape.leaves.append((0..<view.count).map { Array(view.key(at: $0)) })
            }
        }
        try walk(entry.root)
        return shape
    }

    /// One put that overfills its leaf, settled as bytes (the leaf committed) and as a decoded
    /// leaf (the same leaf, decoded first by 17 puts of a value it already holds), leaves the same
    /// tree: the same keys in each leaf and the same separators in each branch, whether the put
    /// is spread over a neighbour (two or three leaves), splits its leaf, lands at a leaf's right
    /// edge, replaces a value, or splits the root leaf.
    @Test(arguments: [30, 1])
    func anOverfillingPutLeavesTheSameTreeAsBytesAsDecoded(commits: Int) throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests same tree seed: \(seed) (\(commits) commits)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let base = directory.file("base.chrono")
        var keys: [[UInt8]] = []
        let store = try Store.create(at: base, options: StoreOptions())
        for _ in 0..<commits {
            try store.write { transaction in
                // One commit: a single leaf about four fifths full (3.3 to 3.45 KB of entries: key,
                // value and 8 bytes of entry header and slot each), so that every put of a new key
                // below (760 bytes or more, 780 with its key and header) overfills its 4 KiB page.
                var used = 0
                var count = 0
                while commits == 1 ? used < 3_300 : count < 60 {
                    let key = generator.bytes(12)
                    keys.append(key)
                    let valueSize = commits == 1 ? Int.random(in: 60...120, using: &generator) : Int.random(in: 20...140, using: &generator)
                    try transaction.put(key, generator.bytes(valueSize), in: "c")
                    used += 12 + valueSize + 8
                    count += 1
                }
            }
        }
        let before = try treeShape(store, "c")
        try store.close()
        keys.sort { KeyOrder.compare($0, $1) < 0 }
        var reshaped = 0
        for trial in 0..<12 {
            let replacing = trial % 4 == 3
            let key = replacing ? keys[Int.random(in: 0..<keys.count, using: &generator)] : generator.bytes(12)
            let value = generator.bytes(Int.random(in: (commits == 1 ? 760 : 500)...1_200, using: &generator))
            // A stored key in the leaf the put goes to: the greatest not above it.
            let leafKey = keys.last { KeyOrder.compare($0, key) <= 0 } ?? keys[0]
            var shapes: [TreeShape] = []
            for decodedFirst in [false, true] {
                let path = directory.file("trial-\(trial)-\(decodedFirst).chrono")
                try FileManager.default.copyItem(atPath: base, toPath: path)
                let copy = try Store.open(at: path, options: StoreOptions())
                let held = try #require(try copy.read { try $0.value(forKey: leafKey, in: "c") })
                try copy.write { transaction in
                    if decodedFirst { for _ in 0..<17 { try transaction.put(leafKey, held, in: "c") } }
                    try transaction.put(key, value, in: "c")
                }
                shapes.append(try treeShape(copy, "c"))
                #expect(try copy.verify().isSound, "seed \(seed) trial \(trial)")
                try copy.close()
            }
            let sameTree = shapes[0] == shapes[1]
            #expect(sameTree, "seed \(seed) trial \(trial): the byte path left another tree")
            // Split or spread: another leaf count, or other separators.
            if shapes[0].leaves.count != before.leaves.count || shapes[0].separators != before.separators { reshaped += 1 }
        }
        #expect(reshaped >= 3, "seed \(seed): only \(reshaped) of 12 puts split or spread a leaf")
    }

    /// Many edits of the same leaves in one transaction, on a store file: the first copies each
    /// leaf's bytes, the next few edit those bytes, later ones decode the leaf. Reads inside the
    /// transaction, after commit and after reopening agree with a model; verify finds no damage.
    @Test func manyEditsOfTheSameLeavesInOneTransactionReadBackAsTheModel() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests transaction seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.file("edits.chrono")
        var model: [[UInt8]: [UInt8]] = [:]
        var store = try Store.create(at: path, options: StoreOptions())
        try store.write { transaction in
            for index in 0..<400 {
                let key = bytes(String(format: "key-%05d", index * 10))
                let value = generator.bytes(Int.random(in: 0...40, using: &generator))
                try transaction.put(key, value, in: "c")
                model[key] = value
            }
        }
        for round in 0..<6 {
            try store.write { transaction in
                for _ in 0..<60 {
                    // Keys near one another land in the same few leaves.
                    let key = bytes(String(format: "key-%05d", Int.random(in: 0..<400, using: &generator) * 10 + Int.random(in: 0...2, using: &generator)))
                    if model[key] != nil && Int.random(in: 0..<3, using: &generator) == 0 {
                        #expect(try transaction.delete(key, in: "c"))
                        model[key] = nil
                    } else {
                        let value = generator.bytes(Int.random(in: 0...60, using: &generator))
                        try transaction.put(key, value, in: "c")
                        model[key] = value
                    }
                    #expect(try transaction.value(forKey: key, in: "c") == model[key], "seed \(seed) round \(round)")
                }
                #expect(try entries(transaction, "c").map(\.0) == model.keys.sorted { KeyOrder.compare($0, $1) < 0 }, "seed \(seed)")
            }
            if round == 3 {
                try store.close()
                store = try Store.open(at: path, options: StoreOptions())
            }
            let stored = try store.read { reader in try entries(reader, "c") }
            #expect(stored.count == model.count, "seed \(seed) round \(round)")
            for (key, value) in stored { #expect(model[key] == value, "seed \(seed) round \(round)") }
        }
        #expect(try store.verify().isSound)
        try store.close()
    }

    /// A stored leaf whose entries do not follow their slots in order (valid, but not how this
    /// engine lays leaves out) is recognized, and a put into it is laid out entry by entry.
    @Test func aLeafLaidOutOutOfOrderIsEditedEntryByEntry() throws {
        let seed = SeededGenerator.seed()
        print("LeafBytesEditTests layout seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        let (node, canonical) = randomLeaf(20, pageSize: 4096, generator: &generator)
        let canonicalLayout = NodeLayout.leafLayout(LeafView(page: canonical))
        #expect(canonicalLayout.canonicalEnd == NodeLayout.canonicalLeafEnd(LeafView(page: canonical)))
        // The same entries, stored last to first.
        let shuffled = PageBuffer(pageSize: 4096)
        let view = LeafView(page: canonical)
        var cursor = NodeLayout.leafOffsetsStart + 2 * node.keys.count
        for entry in (0..<node.keys.count).reversed() {
            let length = view.entryByteCount(entry) - 2
            shuffled.bytes.storeLittleEndian(UInt16(cursor), at: NodeLayout.leafOffsetsStart + 2 * entry)
            (shuffled.bytes.baseAddress! + cursor).copyMemory(from: canonical.readOnly.baseAddress! + view.entryOffset(entry), byteCount: length)
            cursor += length
        }
        shuffled.seal(kind: .leaf, page: PageID(7), birth: TransactionID(3), count: node.keys.count)
        try NodeLayout.validate(shuffled, kind: .leaf)
        let layout = NodeLayout.leafLayout(LeafView(page: shuffled))
        #expect(layout.canonicalEnd == nil)
        #expect(layout.byteCount == canonicalLayout.byteCount)
        #expect(NodeLayout.decodeLeaf(shuffled).keys == node.keys)
    }

    /// The dirty leaf's mark and edit count: the first put into a committed leaf lays it out as
    /// bytes (marked, 0 edits), each of the next 16 puts into it edits those bytes again (count
    /// 1 ... 16), and the 18th decodes it. The committed page's flags byte is 0 again.
    @Test func aDirtyLeafTakesSixteenByteEditsThenIsDecodedAndIsStoredWithFlagsZero() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("mark.chrono")
        let store = try Store.create(at: path, options: StoreOptions())
        defer { try? store.close() }
        try store.write { transaction in
            for index in 0..<40 { try transaction.put(bytes(String(format: "k%03d", index * 2)), bytes("v\(index)"), in: "c") }
        }
        func leafState(_ transaction: WriteTransaction) -> (raw: Bool, flags: UInt8)? {
            for page in transaction.dirty.values {
                switch page {
                case .raw(let buffer, .leaf, _) where buffer.entryCount > 30: return (true, buffer.bytes.loadLittleEndian(at: PageHeader.flagsOffset))
                case .leaf(let node) where node.keys.count > 30: return (false, 0)
                default: continue
                }
            }
            return nil
        }
        try store.write { transaction in
            try transaction.put(bytes("k001"), bytes("x"), in: "c")
            #expect(leafState(transaction).map { $0.raw && $0.flags == 0x80 } == true)
            for edit in 1...16 {
                try transaction.put(bytes(String(format: "k%03d", edit * 2 + 1)), bytes("y"), in: "c")
                #expect(leafState(transaction).map { $0.raw && $0.flags == 0x80 | UInt8(edit) } == true, "edit \(edit)")
            }
            try transaction.put(bytes("k099"), bytes("z"), in: "c")
            #expect(leafState(transaction).map { !$0.raw } == true, "decoded after 16 byte edits")
        }
        let collectionRoot = try store.read { reader in try reader.count(in: "c") }
        #expect(collectionRoot == 58)
        // Every page of the head, read back as stored, has flags 0 (validation checks it).
        #expect(try store.verify().isSound)
        try store.write { transaction in
            try transaction.put(bytes("k003"), bytes("again"), in: "c")
            #expect(leafState(transaction).map { $0.raw && $0.flags == 0x80 } == true, "a committed leaf starts unmarked")
        }
    }

    /// A stored leaf whose reserved flags byte is not 0 (as an edit in progress marks its own
    /// buffer) is damage, named, not a page to edit as bytes.
    @Test func aStoredLeafWithFlagsSetIsDamage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("flags.chrono")
        let store = try Store.create(at: path, options: StoreOptions())
        try store.write { transaction in
            for index in 0..<20 { try transaction.put(bytes("k\(index)"), bytes("v\(index)"), in: "c") }
        }
        let pageSize = store.pageSize
        // Twenty small records: the collection is one leaf, its root.
        let leaf = try store.read { reader in try #require(try reader.collectionEntry(named: "c")).root }
        try store.close()
        try PageCrafting.edit(path, page: leaf.page, pageSize: pageSize) { bytes in
            bytes.storeLittleEndian(UInt8(0x81), at: PageHeader.flagsOffset)
        }
        let reopened = try Store.open(at: path, options: StoreOptions(cacheByteCount: 0))
        defer { try? reopened.close() }
        let error = #expect(throws: StoreError.self) { try reopened.write { try $0.put(bytes("k3"), bytes("new"), in: "c") } }
        if case .malformedPage(let page, _)? = error { #expect(page == leaf.page) } else { Issue.record("expected malformedPage, got \(String(describing: error))") }
        #expect(throws: StoreError.self) { try reopened.read { try $0.value(forKey: bytes("k3"), in: "c") } }
    }
}
