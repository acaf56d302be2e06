// "Page delta encoding" checked against the code: the spec reader's own decoder rebuilds the
// document's example, enforces each listed rule, and agrees with the engine on every delta.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

extension FileFormatSpecTests {
    @Test func theSpecsDeltaExampleDecodesToItsTarget() throws {
        let base = [UInt8](0..<16)
        let delta: [UInt8] = [0x01, 0x10, 0x10, 0x10, 0x08, 0x09, 0xAA, 0xBB, 0x12, 0xEE, 0x0F, 0x0B, 0x01, 0x01]
        let target: [UInt8] = [0x04, 0x05, 0x06, 0x07, 0xAA, 0xBB, 0xEE, 0xEE, 0xEE, 0xEE, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A]
        #expect(try SpecPageDelta.decode(delta, base: base, targetLength: 16) == target)
    }

    /// Every rule of the spec's table, in the spec's order of checks and with its offsets, holds
    /// for the spec reader's decoder and for the engine's alike.
    @Test func theSpecDeltaDecoderEnforcesEveryRuleTheSpecLists() throws {
        let base = [UInt8](0..<16)
        let cases: [([UInt8], SpecDeltaError)] = [
            ([], .truncated(offset: 0)),
            ([0x01, 0x10, 0x10, 0x09, 0xAA], .truncated(offset: 4)),  // insert of 2 bytes, 1 left
            ([0x01, 0x10, 0x10, 0x00, 0x80], .truncated(offset: 5)),  // a varint's missing byte
            ([0x01, 0x80], .truncated(offset: 2)),
            ([0x01, 0x10, 0x10, 0x23, 0x00, 0x00], .truncated(offset: 5)),  // the addend's start
            ([0x01, 0x10, 0x10, 0x44, 0x80, 0x80, 0x80, 0x80, 0x10], .overrunsTarget(offset: 3)),  // before the shift
            ([0x01, 0x10, 0x10, 0x04, 0x80, 0x80, 0x80, 0x80, 0x10], .varintOutOfRange(offset: 4)),
            ([0x01, 0x10, 0x10, 0x46], .overrunsTarget(offset: 3)),  // fill of 17: before its byte
            ([0x02, 0x10, 0x10], .unsupportedVersion),
            ([0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], .varintOutOfRange(offset: 1)),  // a 6th byte
            ([0x01, 0x80, 0x80, 0x80, 0x80, 0x10], .varintOutOfRange(offset: 1)),  // 2³² − 1 exceeded
            ([0x01, 0x11, 0x10], .targetLengthMismatch),
            ([0x01, 0x10, 0x00], .baseLengthMismatch),
            ([0x01, 0x10, 0x10, 0x00, 0x00, 0x00], .zeroLength(offset: 3)),
            ([0x01, 0x10, 0x10, 0x46, 0x07], .overrunsTarget(offset: 3)),  // fill of 17
            ([0x01, 0x10, 0x10, 0x40, 0x02], .copyOutsideBase(offset: 3)),  // 16 bytes from base 1
            ([0x01, 0x10, 0x10, 0x04, 0x01], .copyOutsideBase(offset: 3)),  // from base −1
            ([0x01, 0x10, 0x10, 0x27, 0x00, 0x00, 0x00], .overrunsTarget(offset: 3)),  // 9 words
            ([0x01, 0x10, 0x10, 0x23, 0x02, 0x00, 0x00], .copyOutsideBase(offset: 3)),  // 8 words from 1
            ([0x01, 0x10, 0x10, 0x3C, 0x00], .incomplete(written: 15, expected: 16)),
        ]
        for (delta, error) in cases {
            #expect(throws: error, "\(delta)") { try SpecPageDelta.decode(delta, base: base, targetLength: 16) }
            #expect(throws: error, "engine: \(delta)") {
                do { _ = try PageDelta.decode(delta, base: base, targetLength: 16) } catch let error as PageDeltaError { throw Self.specError(error) }
            }
        }
        // A varint length (L = 0) is accepted for any length, and a keyframe has no base.
        #expect(try SpecPageDelta.decode([0x01, 0x10, 0x00, 0x02, 0x10, 0x07], base: [], targetLength: 16) == [UInt8](repeating: 7, count: 16))
    }

    /// The engine's error as the spec names it.
    static func specError(_ error: PageDeltaError) -> SpecDeltaError {
        switch error {
        case .truncated(let offset): .truncated(offset: offset)
        case .unsupportedVersion: .unsupportedVersion
        case .varintOutOfRange(let offset): .varintOutOfRange(offset: offset)
        case .targetLengthMismatch: .targetLengthMismatch
        case .baseLengthMismatch: .baseLengthMismatch
        case .zeroLength(let offset): .zeroLength(offset: offset)
        case .overrunsTarget(let offset): .overrunsTarget(offset: offset)
        case .copyOutsideBase(let offset): .copyOutsideBase(offset: offset)
        case .incomplete(let written, let expected): .incomplete(written: written, expected: expected)
        }
    }

    static func decodeBoth(_ delta: [UInt8], base: [UInt8]) -> (Result<[UInt8], SpecDeltaError>, Result<[UInt8], SpecDeltaError>) {
        let spec = Result { () throws(SpecDeltaError) in try SpecPageDelta.decode(delta, base: base, targetLength: 4096) }
        let engine = Result { () throws(SpecDeltaError) in
            do { return try PageDelta.decode(delta, base: base, targetLength: 4096) } catch let error as PageDeltaError {
                throw specError(error)
            } catch { throw .unsupportedVersion }
        }
        return (spec, engine)
    }

    @Test func theSpecDeltaDecoderAgreesWithTheEngineOnEncodedAndCorruptedDeltas() throws {
        let seed = SeededGenerator.seed()
        print("FileFormatSpecTests delta seed: \(seed)")
        var maker = DeltaPageMaker(seed: seed)
        for round in 0..<60 {
            let node = maker.leaf()
            let reference = maker.reference()
            let old = maker.seal(node, as: reference)
            guard maker.edit(node) else { continue }
            let new = maker.seal(node, as: maker.successor(of: reference))
            let base = round % 10 == 0 ? [] : new
            let delta = PageDelta.encode(old, base: base)
            #expect(try SpecPageDelta.decode(delta, base: base, targetLength: 4096) == old, "seed \(seed), round \(round)")
            for _ in 0..<20 {
                var corrupted = delta
                if maker.number(0...3) == 0 {
                    corrupted.removeLast(maker.number(1...delta.count))
                } else {
                    corrupted[maker.number(0...(delta.count - 1))] ^= UInt8(1 << maker.number(0...7))
                }
                let (spec, engine) = Self.decodeBoth(corrupted, base: base)
                #expect(spec == engine, "seed \(seed), round \(round): \(corrupted)")
            }
        }
    }
}
