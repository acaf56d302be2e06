// The byte order of keys: unsigned lexicographic, shorter first on a shared prefix.

/// Compares keys as unsigned byte strings (the order of `memcmp`, then length).
package enum KeyOrder {
    /// Negative, zero or positive as `lhs` sorts before, equal to, or after `rhs`.
    @inline(__always)
    static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let shared = min(lhs.count, rhs.count)
        var index = 0
        if shared > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            while shared - index >= 8 {
                let a = UInt64(bigEndian: left.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let b = UInt64(bigEndian: right.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                if a != b { return a < b ? -1 : 1 }
                index += 8
            }
            while index < shared {
                let a = left.load(fromByteOffset: index, as: UInt8.self)
                let b = right.load(fromByteOffset: index, as: UInt8.self)
                if a != b { return a < b ? -1 : 1 }
                index += 1
            }
        }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }

    package static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in compare(left, right) } }
    }

    static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: [UInt8]) -> Int {
        rhs.withUnsafeBytes { right in compare(lhs, right) }
    }

    /// Binary search over `count` sorted keys: the index of `key` and whether it is there, or
    /// where it would be inserted. `compareAt(i)` compares key `i` with the sought key.
    @inline(__always)
    static func search(count: Int, _ compareAt: (Int) -> Int) -> (index: Int, found: Bool) {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            let order = compareAt(middle)
            if order < 0 {
                low = middle + 1
            } else if order > 0 {
                high = middle
            } else {
                return (middle, true)
            }
        }
        return (low, false)
    }

    /// How many of `count` sorted separators are ≤ the sought key: the child that holds it.
    @inline(__always)
    static func childIndex(count: Int, _ compareAt: (Int) -> Int) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if compareAt(middle) <= 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
