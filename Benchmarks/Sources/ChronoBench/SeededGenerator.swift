// A deterministic random number generator, so every run loads the same records in the same order.

/// SplitMix64: small, fast and good enough to make benchmark keys and values.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Fills `buffer` with random bytes.
    mutating func fill(_ buffer: inout [UInt8]) {
        var index = 0
        while index < buffer.count {
            var word = next()
            for _ in 0..<min(8, buffer.count - index) {
                buffer[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
    }

    /// `count` indices drawn uniformly from `0..<bound`, with replacement.
    mutating func indices(count: Int, below bound: Int) -> [Int] {
        precondition(bound > 0, "cannot draw from an empty range")
        return (0..<count).map { _ in Int.random(in: 0..<bound, using: &self) }
    }
}
