// The benchmark's records: fixed-size random keys and values held in two flat buffers.

import Foundation

/// `count` records of `keyByteCount`-byte keys and `valueByteCount`-byte values, all random,
/// generated from one seed. Stored flat so a million records cost two allocations, not two
/// million; each accessor copies one record out, which both engines pay alike.
struct RecordSet: Sendable {
    static let keyByteCount = 24
    static let valueByteCount = 150

    let count: Int
    private let keys: [UInt8]
    private let values: [UInt8]

    init(count: Int, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var keys = [UInt8](repeating: 0, count: count * Self.keyByteCount)
        var values = [UInt8](repeating: 0, count: count * Self.valueByteCount)
        generator.fill(&keys)
        generator.fill(&values)
        self.count = count
        self.keys = keys
        self.values = values
    }

    func key(_ index: Int) -> [UInt8] {
        Array(keys[index * Self.keyByteCount..<(index + 1) * Self.keyByteCount])
    }

    func value(_ index: Int) -> [UInt8] {
        Array(values[index * Self.valueByteCount..<(index + 1) * Self.valueByteCount])
    }

    func keyData(_ index: Int) -> Data {
        Data(keys[index * Self.keyByteCount..<(index + 1) * Self.keyByteCount])
    }

    func valueData(_ index: Int) -> Data {
        Data(values[index * Self.valueByteCount..<(index + 1) * Self.valueByteCount])
    }

    /// Bytes held by the two buffers.
    var byteCount: Int { keys.count + values.count }
}
