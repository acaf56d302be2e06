// The page delta codec: every older page rebuilds exactly from its delta against the newer one,
// and the deltas of typical B+tree edits cost about what changed.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Page deltas")
struct PageDeltaTests {
    /// Encodes `old` against `base` and checks it decodes back exactly; returns the delta.
    @discardableResult
    static func roundTrip(_ old: [UInt8], base: [UInt8], _ context: String) throws -> [UInt8] {
        let delta = PageDelta.encode(old, base: base)
        let decoded = try PageDelta.decode(delta, base: base, targetLength: old.count)
        #expect(decoded == old, "\(context): decoded page differs")
        return delta
    }

    /// The one-pass path's edge cases: each delta decodes exactly, with the operations expected.
    @Test func theOnePassPathHandlesEveryShapeOfStretch() throws {
        var generator = SeededGenerator(seed: 13)
        let page = generator.bytes(4096)
        func changed(_ range: Range<Int>, in bytes: [UInt8]) -> [UInt8] {
            var copy = bytes
            for index in range { copy[index] ^= 0xA5 }
            return copy
        }
        // (name, target, base, operations expected: copy/insert/copy present)
        let cases: [(String, [UInt8], [UInt8], Int)] = [
            ("identical", page, page, 1),
            ("first byte", changed(0..<1, in: page), page, 2),
            ("last byte", changed(4095..<4096, in: page), page, 2),
            ("a stretch of 200 bytes (length as a varint)", changed(1000..<1200, in: page), page, 3),
            ("a 5-byte page", changed(2..<3, in: Array(page[0..<5])), Array(page[0..<5]), 3),
            ("every byte of a 5-byte page", changed(0..<5, in: Array(page[0..<5])), Array(page[0..<5]), 1),
        ]
        for (name, target, base, operations) in cases {
            let delta = try #require(Self.localChange(target, base: base), "\(name)")
            #expect(try PageDelta.decode(delta, base: base, targetLength: target.count) == target, "\(name)")
            // Version, target length and base length (2 bytes each for 4096), then the operations.
            let header = 1 + (target.count < 128 ? 1 : 2) * 2
            var position = header
            var seen = 0
            while position < delta.count {
                let control = delta[position]
                let inline = Int(control >> 2)
                position += 1
                var length = inline
                if inline == 0 {
                    length = 0
                    var shift = 0
                    while true {
                        let byte = delta[position]
                        length |= Int(byte & 0x7F) << shift
                        position += 1
                        shift += 7
                        if byte & 0x80 == 0 { break }
                    }
                }
                switch control & 3 {
                case 0: position += 1  // copy: zigzag shift 0, one byte
                case 1: position += length  // insert: the literal
                default: Issue.record("\(name): unexpected operation \(control & 3)")
                }
                seen += 1
            }
            #expect(seen == operations, "\(name): \(seen) operations")
        }
        #expect(Self.localChange(Array(page[0..<100]), base: page) == nil, "lengths differ")
        #expect(Self.localChange(changed(0..<300, in: page), base: page) == nil, "a stretch beyond the limit")
    }

    /// The word-at-a-time prefix and suffix comparisons the one-pass path starts with agree
    /// with a byte-by-byte count wherever the first and last differences fall (inside a 32-byte
    /// step, at its edges, in the 8-byte and single-byte tails, nowhere).
    @Test func commonPrefixAndSuffixCountsMatchAByteByByteCount() throws {
        let seed = SeededGenerator.seed()
        print("PageDeltaTests prefix and suffix seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...300, using: &generator)
            let left = generator.bytes(count)
            var right = left
            if count > 0 {
                for _ in 0..<Int.random(in: 0...3, using: &generator) {
                    right[Int.random(in: 0..<count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
            }
            var prefix = 0
            while prefix < count && left[prefix] == right[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < count - prefix && left[count - 1 - suffix] == right[count - 1 - suffix] { suffix += 1 }
            let (fastPrefix, fastSuffix) = left.withUnsafeBytes { l in
                right.withUnsafeBytes { r -> (Int, Int) in
                    guard let a = l.baseAddress, let b = r.baseAddress else { return (0, 0) }
                    let found = PageDelta.commonPrefixByteCount(a, b, count: count)
                    return (found, PageDelta.commonSuffixByteCount(a, b, total: count, count: count - found))
                }
            }
            #expect(fastPrefix == prefix, "prefix of \(count) bytes")
            #expect(fastSuffix == suffix, "suffix of \(count) bytes after a prefix of \(prefix)")
        }
    }

    static func localChange(_ target: [UInt8], base: [UInt8]) -> [UInt8]? {
        target.withUnsafeBytes { target in base.withUnsafeBytes { PageDelta.encodeLocalChange(target, base: $0) } }
    }

    /// Random leaves and branches, each edited up to eight times as commits edit them, with the
    /// edited page as the base. Replay with `CHRONO_SEED=<printed seed>`.
    @Test(arguments: [4096, 16384])
    func olderPagesDecodeExactlyFromTheirDeltasAgainstTheNewerVersion(pageSize: Int) throws {
        let seed = SeededGenerator.seed()
        print("PageDeltaTests seed: \(seed) (page size \(pageSize))")
        var maker = DeltaPageMaker(seed: seed, pageSize: pageSize)
        let iterations = Environment.soakEnabled ? 5_000 : 300
        var totals = (delta: 0, pages: 0)
        for iteration in 0..<iterations {
            let reference = maker.reference()
            let edits = maker.number(1...8)
            if iteration % 2 == 0 {
                let node = maker.leaf()
                let old = maker.seal(node, as: reference)
                var fits = true
                for _ in 0..<edits where fits { fits = maker.edit(node) }
                guard fits else { continue }
                let base = maker.seal(node, as: maker.successor(of: reference))
                totals.delta += try Self.roundTrip(old, base: base, "seed \(seed) leaf \(iteration)").count
            } else {
                let node = maker.branch()
                let old = maker.seal(node, as: reference)
                for _ in 0..<edits { maker.edit(node) }
                guard node.byteCount <= pageSize else { continue }
                let base = maker.seal(node, as: maker.successor(of: reference))
                totals.delta += try Self.roundTrip(old, base: base, "seed \(seed) branch \(iteration)").count
            }
            totals.pages += 1
        }
        print("mean delta for 1 to 8 edits: \(totals.delta / max(totals.pages, 1)) bytes of \(pageSize)")
        #expect(totals.delta < totals.pages * pageSize / 4)
    }

    /// Arbitrary bytes against arbitrary bases: unrelated, empty, shorter, longer, or the
    /// target with ranges inserted, deleted, overwritten and 16-bit words shifted.
    @Test func arbitraryBytesDecodeExactlyAgainstArbitraryBases() throws {
        let seed = SeededGenerator.seed()
        print("PageDeltaTests arbitrary seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
        for iteration in 0..<(Environment.soakEnabled ? 20_000 : 1_000) {
            var target = generator.bytes(number(0...5_000))
            if number(0...2) == 0 { target.replaceSubrange(0..<target.count / 2, with: repeatElement(0, count: target.count / 2)) }
            var base: [UInt8]
            switch number(0...3) {
            case 0: base = generator.bytes(number(0...5_000))
            case 1: base = []
            default:
                base = target
                for _ in 0..<number(0...6) {
                    let start = number(0...base.count)
                    let end = min(base.count, start + number(0...300))
                    switch number(0...3) {
                    case 0: base.replaceSubrange(start..<end, with: generator.bytes(number(0...300)))
                    case 1: base.removeSubrange(start..<end)
                    case 2: base.insert(contentsOf: generator.bytes(number(1...300)), at: start)
                    default:
                        let addend = UInt16(number(1...65_535))
                        for offset in stride(from: start, to: end - 1, by: 2) {
                            let word = (UInt16(base[offset]) | UInt16(base[offset + 1]) << 8) &+ addend
                            base[offset] = UInt8(truncatingIfNeeded: word)
                            base[offset + 1] = UInt8(truncatingIfNeeded: word >> 8)
                        }
                    }
                }
            }
            try Self.roundTrip(target, base: base, "seed \(seed) iteration \(iteration)")
        }
    }

    @Test func aLeafWhoseValueChangedInPlaceCostsTheOldValueAndAFewBytes() throws {
        var maker = DeltaPageMaker(seed: 7)
        for trial in 0..<50 {
            let node = maker.leaf()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            let index = maker.number(0...node.keys.count - 1)
            let size = node.values[index].encodedByteCount
            node.replaceValue(at: index, with: .inline(maker.generator.bytes(size)))
            let delta = try Self.roundTrip(old, base: maker.seal(node, as: maker.successor(of: reference)), "trial \(trial)")
            #expect(delta.count <= size + 32, "a \(size)-byte value cost \(delta.count) bytes")
        }
    }

    /// A page that differs from its base in one short stretch at the same place is encoded by
    /// the one-pass path (a copy, a literal, a copy), which decodes exactly; stretches that are
    /// long, or that hold bytes a copy would save, go to the full search, whose delta is then
    /// smaller than the literal would be. Pages are blanked as packing blanks them (checksum,
    /// page number and birth zero), so only the body differs.
    @Test func aLocalChangeTakesTheOnePassPathAndOthersTheSearch() throws {
        var maker = DeltaPageMaker(seed: 12)
        func blanked(_ page: [UInt8]) -> [UInt8] {
            var bytes = page
            for index in 0..<4 { bytes[index] = 0 }
            for index in PageHeader.pageIDOffset..<PageHeader.byteCount { bytes[index] = 0 }
            return bytes
        }
        var tried = 0
        for trial in 0..<50 {
            let node = maker.leaf()
            guard node.keys.count >= 8 else { continue }
            let newer = maker.successor(of: maker.reference())
            let old = blanked(maker.seal(node, as: newer))
            let first = maker.number(0...node.keys.count / 2 - 1)
            let last = node.keys.count - 1
            guard case .inline(let value) = node.values[first], case .inline(let lastValue) = node.values[last],
                (8...PageDelta.localChangeByteLimit).contains(value.count), lastValue.count >= 8
            else { continue }
            let (size, lastSize) = (value.count, lastValue.count)
            tried += 1
            // One value replaced by one of the same size: the one-pass path.
            node.replaceValue(at: first, with: .inline(maker.generator.bytes(size)))
            let oneChange = blanked(maker.seal(node, as: newer))
            let local = try #require(Self.localChange(old, base: oneChange), "trial \(trial): a \(size)-byte value")
            #expect(try PageDelta.decode(local, base: oneChange, targetLength: old.count) == old, "trial \(trial)")
            #expect(local.count <= size + 16, "trial \(trial): a \(size)-byte value cost \(local.count) bytes")
            // Two values far apart: the entries between them match the base, so the search
            // copies them rather than writing them as a literal.
            node.replaceValue(at: last, with: .inline(maker.generator.bytes(lastSize)))
            let twoChanges = blanked(maker.seal(node, as: newer))
            #expect(Self.localChange(old, base: twoChanges) == nil, "trial \(trial)")
            let searched = try Self.roundTrip(old, base: twoChanges, "trial \(trial), two changes")
            #expect(searched.count <= size + lastSize + 48, "trial \(trial): two values cost \(searched.count) bytes")
        }
        #expect(tried >= 20, "only \(tried) leaves had a value the one-pass path takes")
        // Bytes equal to the base's inside a short stretch: fewer than the limit stay in the
        // literal; a run of the limit or more is worth a copy, so the search decides.
        let base = [UInt8](repeating: 7, count: 4096)
        var page = base
        page[100] = 1
        page[100 + PageDelta.localMatchByteLimit] = 2
        let short = try #require(Self.localChange(page, base: base))
        #expect(try PageDelta.decode(short, base: base, targetLength: page.count) == page)
        page[100 + PageDelta.localMatchByteLimit] = 7
        page[101 + PageDelta.localMatchByteLimit] = 2
        #expect(Self.localChange(page, base: base) == nil)
        try Self.roundTrip(page, base: base, "equal run inside the stretch")
    }

    /// The older leaf lacks an entry its successor has: every later entry and every offset slot
    /// moved, and the delta is still a few operations.
    @Test func aLeafThatGainedAnEntryCostsAFewOperations() throws {
        var maker = DeltaPageMaker(seed: 8)
        for trial in 0..<50 {
            let node = maker.leaf()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            let key = maker.key()
            let slot = key.withUnsafeBytes { BTree.search(node, $0) }
            guard !slot.found else { continue }
            node.insert(key: key, value: .inline(maker.generator.bytes(120)), at: slot.index)
            guard node.byteCount <= maker.pageSize else { continue }
            let delta = try Self.roundTrip(old, base: maker.seal(node, as: maker.successor(of: reference)), "trial \(trial)")
            #expect(delta.count <= 48, "an insert cost \(delta.count) bytes")
        }
    }

    /// The older leaf has an entry its successor lost (or one whose value grew): the delta
    /// carries that entry's bytes.
    @Test func aLeafThatLostAnEntryCostsThatEntryAndAFewOperations() throws {
        var maker = DeltaPageMaker(seed: 9)
        for trial in 0..<50 {
            let node = maker.leaf()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            let index = maker.number(0...node.keys.count - 1)
            let entry = NodeLayout.leafEntryByteCount(key: node.keys[index], value: node.values[index])
            node.remove(at: index)
            let delta = try Self.roundTrip(old, base: maker.seal(node, as: maker.successor(of: reference)), "trial \(trial)")
            #expect(delta.count <= entry + 48, "removing a \(entry)-byte entry cost \(delta.count) bytes")
        }
    }

    @Test func aBranchWhoseChildChangedCostsAFewDozenBytes() throws {
        var maker = DeltaPageMaker(seed: 10)
        for trial in 0..<50 {
            let node = maker.branch()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            let index = maker.number(0...node.children.count - 1)
            let previous = node.children[index]
            node.children[index] = PageReference(
                page: PageID(UInt64(maker.number(2...500_000))), birth: TransactionID(previous.birth.rawValue + 40))
            let delta = try Self.roundTrip(old, base: maker.seal(node, as: maker.successor(of: reference)), "trial \(trial)")
            #expect(delta.count <= 40, "one child reference cost \(delta.count) bytes")
        }
    }

    @Test func anUnchangedPageCostsAFewBytes() throws {
        var maker = DeltaPageMaker(seed: 11)
        let page = maker.seal(maker.leaf(), as: maker.reference())
        let delta = try Self.roundTrip(page, base: page, "identical")
        #expect(delta.count <= 12, "an unchanged page cost \(delta.count) bytes")
    }

    /// A keyframe (no base) of a half-empty page costs its used bytes: the zero tail is one fill.
    @Test func aKeyframeCostsTheUsedBytesOfThePage() throws {
        var maker = DeltaPageMaker(seed: 12)
        let node = maker.leaf()
        let page = maker.seal(node, as: maker.reference())
        let delta = try Self.roundTrip(page, base: [], "keyframe")
        #expect(delta.count <= node.byteCount + 16, "a keyframe of \(node.byteCount) used bytes cost \(delta.count)")
        #expect(Array(delta.prefix(3)) == [1, 0x80, 0x20], "version 1, target length 4096 as a varint")
        #expect(delta[3] == 0, "base length 0")
    }
}
