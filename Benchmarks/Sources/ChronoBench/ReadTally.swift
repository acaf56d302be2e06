// What a read workload saw, so the two engines can be checked to have done the same work.

/// How many entries a workload found and an order-dependent digest of their values. Both
/// engines must return the same tally for the same workload, or their timings compare
/// different work.
struct ReadTally: Equatable, Sendable {
    var count = 0
    var digest: UInt64 = 0

    /// Adds one value: its length and first eight bytes go into the digest.
    mutating func add<Bytes: Collection<UInt8>>(_ value: Bytes) {
        count += 1
        var word = UInt64(value.count)
        for byte in value.prefix(8) { word = word << 8 | UInt64(byte) }
        digest = digest &* 0x100_0000_01B3 &+ word
    }
}
