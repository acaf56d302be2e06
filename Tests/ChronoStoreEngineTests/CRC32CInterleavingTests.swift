// The hardware CRC-32C's three interleaved chains, joined by carry-less multiplication, must give
// exactly the table checksum at every length, block boundary and alignment.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("CRC-32C interleaving")
struct CRC32CInterleavingTests {
    /// A header slot and the page sizes a store may use.
    private static let bufferSizes = [512, 4096, 8192, 16_384, 65_536]

    /// Start offsets into a larger buffer, so every alignment of the first word is tried.
    private static let misalignments = 0...7

    /// Lengths within 32 bytes of a `size`-byte buffer's end and of its three blocks' ends. The
    /// hardware path cuts a buffer into three blocks of `size / 24 * 8` bytes and a tail under 24
    /// bytes, so this covers every tail length and neighbouring block lengths on both sides.
    private static func lengths(around size: Int) -> [Int] {
        let blockByteCount = size / 24 * 8
        let boundaries = [blockByteCount, 2 * blockByteCount, 3 * blockByteCount, size]
        return Set(boundaries.flatMap { ($0 - 32)...($0 + 32) }).sorted()
    }

    /// Random bytes from a printed seed (set CHRONO_SEED to replay one), with room for the misalignments.
    private static func randomBytes(_ count: Int, test: String) -> (bytes: [UInt8], seed: UInt64) {
        let seed = SeededGenerator.seed(fromEnvironment: "CHRONO_SEED")
        print("\(test): CHRONO_SEED=\(seed), processor instruction: \(CRC32C.usesHardware)")
        var generator = SeededGenerator(seed: seed)
        return (generator.bytes(count + misalignments.upperBound), seed)
    }

    /// Expects the hardware and table checksums to agree on `count` bytes at `offset` in `buffer`.
    private static func expectAgreement(
        _ buffer: UnsafeRawBufferPointer, offset: Int, count: Int, seed: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
        let hardware = CRC32C.checksum(slice)
        let table = CRC32C.softwareChecksum(slice)
        #expect(
            hardware == table, "length \(count), offset \(offset), seed \(seed)", sourceLocation: sourceLocation)
    }

    @Test func everyLengthUpToElevenHundredBytesMatchesTheTableChecksum() {
        let (bytes, seed) = Self.randomBytes(1_100, test: #function)
        bytes.withUnsafeBytes { buffer in
            for offset in Self.misalignments {
                for count in 0...1_100 {
                    Self.expectAgreement(buffer, offset: offset, count: count, seed: seed)
                }
            }
        }
    }

    @Test(arguments: bufferSizes)
    func lengthsAroundEachBlockBoundaryMatchTheTableChecksum(size: Int) {
        let lengths = Self.lengths(around: size)
        let (bytes, seed) = Self.randomBytes(lengths.max() ?? 0, test: "\(#function) size \(size)")
        bytes.withUnsafeBytes { buffer in
            for offset in Self.misalignments {
                for count in lengths {
                    Self.expectAgreement(buffer, offset: offset, count: count, seed: seed)
                }
            }
        }
    }

    /// The factors that join the chains are cached per block length; alternating lengths that share
    /// or evict cache slots, from several tasks at once, must still give each length its own result.
    @Test func concurrentChecksumsOfAlternatingLengthsMatchTheTableChecksum() async {
        let lengths = [508, 512, 1_020, 4_092, 4_096, 8_188, 16_380, 65_532, 777, 2_401]
        let (bytes, seed) = Self.randomBytes(65_536, test: #function)
        let expected = bytes.withUnsafeBytes { buffer in
            lengths.map { CRC32C.softwareChecksum(UnsafeRawBufferPointer(rebasing: buffer[0..<$0])) }
        }
        let mismatches = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<4 {
                group.addTask {
                    bytes.withUnsafeBytes { buffer in
                        (0..<200).compactMap { round in
                            let index = (round * 7 + task * 3) % lengths.count
                            let slice = UnsafeRawBufferPointer(rebasing: buffer[0..<lengths[index]])
                            return CRC32C.checksum(slice) == expected[index] ? nil : lengths[index]
                        }
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(mismatches.isEmpty, "mismatched lengths \(mismatches), seed \(seed)")
    }

    @Test func theCheckValueIsPinned() {
        let checkInput = Array("123456789".utf8)
        #expect(CRC32C.checksum(checkInput) == 0xE306_9283)
        #expect(checkInput.withUnsafeBytes { CRC32C.softwareChecksum($0) } == 0xE306_9283)
    }

    /// Long enough for three chains; the values come from a bit-at-a-time computation outside the
    /// engine. 4,092 bytes is what a 4 KiB page's checksum covers.
    @Test func aPatternedPageIsPinned() {
        let page = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 31 + 7) }
        #expect(CRC32C.checksum(page) == 0xE1C2_F7E8)
        #expect(CRC32C.checksum(Array(page[0..<4092])) == 0xFD13_8994)
    }
}
