// CRC-32C (Castagnoli): the processor's instruction where it has one, else slicing-by-8 tables.
internal import ChronoChecksum

/// The CRC-32C checksum used for every page and header slot.
///
/// Polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and final XOR 0xFFFFFFFF, as in
/// iSCSI and ext4. The "123456789" check value is 0xE3069283.
package enum CRC32C {
    private static let tables: [[UInt32]] = {
        var tables = Array(repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][byte]
                tables[slice][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The flattened tables, one contiguous allocation for the hot loop.
    private static let flatTable: [UInt32] = tables.flatMap { $0 }

    /// Whether the processor computes CRC-32C itself (SSE 4.2 on x86-64, CRC on arm64).
    package static let usesHardware = chrono_crc32c_hardware_available() != 0

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        if usesHardware, let base = bytes.baseAddress {
            return chrono_crc32c_hardware(0xFFFF_FFFF, base, bytes.count) ^ 0xFFFF_FFFF
        }
        return softwareChecksum(bytes)
    }

    /// The checksum computed with tables only (what every processor without the instruction uses).
    package static func softwareChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0xFFFF_FFFF, bytes) ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes` (convenience for arrays).
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    private static func update(_ initial: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = initial
        var index = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return crc }
        flatTable.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc = table[7 * 256 + Int(low & 0xFF)]
                    ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)]
                    ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)]
                    ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)]
                    ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc
    }
}
