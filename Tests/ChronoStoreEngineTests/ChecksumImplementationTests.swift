// The hardware CRC-32C path must give exactly the table path's results, so files stay readable
// on processors with and without the instruction.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Checksum implementations")
struct ChecksumImplementationTests {
    @Test func hardwareAndTableChecksumsAgreeOnEveryLengthAndAlignment() {
        print("CRC-32C uses the processor's instruction: \(CRC32C.usesHardware)")
        var generator = SeededGenerator(seed: 77)
        let data = generator.bytes(9000)
        data.withUnsafeBytes { raw in
            for start in 0..<9 {
                for length in [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 511, 4088, 4096, 8191] {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.softwareChecksum(slice), "start \(start), length \(length)")
                }
            }
        }
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    }
}
