// Damaged and crafted page deltas: every one is a typed error or a page of the right size, never a
// trap or a read outside the delta, the base or the target.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Page delta damage")
struct PageDeltaDamageTests {
    let base: [UInt8] = (0..<64).map { UInt8($0) }

    /// Decodes `delta` against `self.base` into 16 bytes.
    func decode(_ delta: [UInt8], targetLength: Int = 16) throws -> [UInt8] {
        try PageDelta.decode(delta, base: base, targetLength: targetLength)
    }

    /// The header every crafted delta below starts with: version 1, target 16 bytes, base 64.
    let header: [UInt8] = [1, 16, 64]

    @Test func aWellFormedCraftedDeltaDecodesAsTheFormatDescribes() throws {
        // copy 4 from base 10 (shift +10), insert 2 bytes, fill 4 × 0xEE, adjusted copy of 3 words
        // from base 0 (shift −10) plus 0x0101.
        let delta = header + [4 << 2 | 0, 20, 2 << 2 | 1, 0xAA, 0xBB, 4 << 2 | 2, 0xEE, 3 << 2 | 3, 19, 0x01, 0x01]
        #expect(try decode(delta) == [10, 11, 12, 13, 0xAA, 0xBB, 0xEE, 0xEE, 0xEE, 0xEE, 1, 2, 3, 4, 5, 6])
        // The same copy with its length as a varint after a zero length field.
        let longForm: [UInt8] = [1, 16, 64, 0 << 2 | 0, 16, 0]
        #expect(try decode(longForm) == Array(base[0..<16]))
    }

    /// The example in Docs/FileFormat.md, "Page delta encoding", byte for byte.
    @Test func theFileFormatExampleDecodesAsDocumented() throws {
        let base: [UInt8] = Array(0..<16)
        let delta: [UInt8] = [0x01, 0x10, 0x10, 0x10, 0x08, 0x09, 0xAA, 0xBB, 0x12, 0xEE, 0x0F, 0x0B, 0x01, 0x01]
        #expect(
            try PageDelta.decode(delta, base: base, targetLength: 16)
                == [0x04, 0x05, 0x06, 0x07, 0xAA, 0xBB, 0xEE, 0xEE, 0xEE, 0xEE, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A])
    }

    @Test func headerMismatchesAreRejected() {
        #expect(throws: PageDeltaError.unsupportedVersion(2)) { try decode([2, 16, 64]) }
        #expect(throws: PageDeltaError.targetLengthMismatch(recorded: 17, expected: 16)) { try decode([1, 17, 64]) }
        #expect(throws: PageDeltaError.baseLengthMismatch(recorded: 63, actual: 64)) { try decode([1, 16, 63]) }
        #expect(throws: PageDeltaError.truncated(offset: 0)) { try decode([]) }
    }

    @Test func operationsThatReachOutsideTheBaseOrTargetAreRejected() {
        // copy 4 from shift −1 (before the base) and from 62 (past its end)
        #expect(throws: PageDeltaError.copyOutsideBase(offset: 3)) { try decode(header + [4 << 2 | 0, 1]) }
        #expect(throws: PageDeltaError.copyOutsideBase(offset: 3)) { try decode(header + [4 << 2 | 0, 124]) }
        // adjusted copy of 2 words from 62: the second word lies past the base
        #expect(throws: PageDeltaError.copyOutsideBase(offset: 3)) { try decode(header + [2 << 2 | 3, 124, 0, 0]) }
        // fill 17 into a 16-byte target; adjusted copy of 9 words
        #expect(throws: PageDeltaError.overrunsTarget(offset: 3)) { try decode(header + [17 << 2 | 2, 0]) }
        #expect(throws: PageDeltaError.overrunsTarget(offset: 3)) { try decode(header + [9 << 2 | 3, 0, 0, 0]) }
        // a full fill, then one more byte
        #expect(throws: PageDeltaError.overrunsTarget(offset: 5)) { try decode(header + [16 << 2 | 2, 0, 1 << 2 | 1, 9]) }
        // a huge varint length that would overflow a naive position + length
        #expect(throws: PageDeltaError.overrunsTarget(offset: 3)) { try decode(header + [0 << 2 | 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
    }

    @Test func malformedNumbersAndLengthsAreRejected() {
        #expect(throws: PageDeltaError.zeroLength(offset: 3)) { try decode(header + [0 << 2 | 2, 0, 7]) }
        #expect(throws: PageDeltaError.varintOutOfRange(offset: 4)) { try decode(header + [0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]) }
        #expect(throws: PageDeltaError.varintOutOfRange(offset: 4)) { try decode(header + [0, 0xFF, 0xFF, 0xFF, 0xFF, 0x10]) }
        #expect(throws: PageDeltaError.truncated(offset: 4)) { try decode(header + [4 << 2 | 1, 1]) }
        #expect(throws: PageDeltaError.truncated(offset: 4)) { try decode(header + [2 << 2 | 2]) }
        #expect(throws: PageDeltaError.truncated(offset: 5)) { try decode(header + [2 << 2 | 3, 0, 1]) }
        #expect(throws: PageDeltaError.incomplete(written: 4, expected: 16)) { try decode(header + [4 << 2 | 2, 0]) }
    }

    /// Every proper prefix of a real delta is an error: operations never end early by accident.
    @Test func everyTruncationOfARealDeltaIsATypedError() throws {
        var maker = DeltaPageMaker(seed: 21)
        let node = maker.leaf()
        let reference = maker.reference()
        let old = maker.seal(node, as: reference)
        maker.edit(node)
        let base = maker.seal(node, as: maker.successor(of: reference))
        let delta = PageDelta.encode(old, base: base)
        for length in 0..<delta.count {
            #expect(throws: PageDeltaError.self) {
                try PageDelta.decode(Array(delta[0..<length]), base: base, targetLength: old.count)
            }
        }
    }

    /// Real deltas with random bytes overwritten, and random garbage after a valid header: each
    /// decodes to a page of the right size or throws a ``PageDeltaError``. (A changed literal
    /// byte decodes to a wrong page; packed history's checksum check catches that.)
    @Test func damagedDeltasThrowTypedErrorsOrDecodeToAPageOfTheRightSize() throws {
        let seed = SeededGenerator.seed()
        print("PageDeltaDamageTests seed: \(seed)")
        var maker = DeltaPageMaker(seed: seed)
        var outcomes = (decoded: 0, rejected: 0)
        for _ in 0..<(Environment.soakEnabled ? 20_000 : 1_000) {
            let node = maker.leaf()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            maker.edit(node)
            guard node.byteCount <= maker.pageSize else { continue }
            let base = maker.seal(node, as: maker.successor(of: reference))
            var delta = PageDelta.encode(old, base: base)
            if maker.number(0...3) == 0 {
                delta = Array(delta[0..<min(5, delta.count)]) + maker.generator.bytes(maker.number(0...200))
            } else {
                for _ in 0..<maker.number(1...4) {
                    delta[maker.number(0...delta.count - 1)] = UInt8(truncatingIfNeeded: maker.number(0...255))
                }
            }
            do {
                let decoded = try PageDelta.decode(delta, base: base, targetLength: old.count)
                #expect(decoded.count == old.count)
                outcomes.decoded += 1
            } catch is PageDeltaError {
                outcomes.rejected += 1
            }
        }
        print("damaged deltas: \(outcomes.decoded) decoded, \(outcomes.rejected) rejected")
        #expect(outcomes.rejected > 0)
    }

    /// The decoder writes only the target it was given and reads only the base it was given,
    /// whatever the delta says: decoding into a slice of a larger buffer leaves the rest alone.
    @Test func decodingTouchesNothingOutsideTheTarget() throws {
        var buffer = [UInt8](repeating: 0x5A, count: 48)
        let delta: [UInt8] = [1, 16, 64, 16 << 2 | 2, 0x11]
        try delta.withUnsafeBytes { deltaBytes in
            try base.withUnsafeBytes { baseBytes in
                try buffer.withUnsafeMutableBytes { whole in
                    let middle = UnsafeMutableRawBufferPointer(rebasing: whole[16..<32])
                    try PageDelta.decode(deltaBytes, base: baseBytes, into: middle)
                }
            }
        }
        #expect(buffer[0..<16].allSatisfy { $0 == 0x5A } && buffer[32..<48].allSatisfy { $0 == 0x5A })
        #expect(buffer[16..<32].allSatisfy { $0 == 0x11 })
    }
}
