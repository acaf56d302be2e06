// Distinct identifier types: page numbers, transaction ids, and birth-tagged page references.

/// The number of a page in the data file: its byte offset divided by the page size.
/// Page 0 is the file header; 0 never names a tree page, so it doubles as "none".
package struct PageID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// The "no page" marker.
    package static let none = PageID(0)
    package var isNone: Bool { rawValue == 0 }

    package static func < (lhs: PageID, rhs: PageID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "page \(rawValue)" }

    /// The hash that `Dictionary` and `Set` use, without running SipHash (11-15 % of the write
    /// paths and of an in-cache read when page ids were hashed through `Hasher`; issue 14).
    ///
    /// `_rawHashValue(seed:)` is the standard library's (underscored, public) hook for exactly
    /// this. Page ids come from the engine's own allocator, not from users, so a fast mixing
    /// function is enough; the per-process seed still varies the table layout between runs.
    package func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: PageHashing.mix(rawValue ^ UInt64(truncatingIfNeeded: seed)))
    }
}

/// A cheap, well-spread 64-bit mix (the finalizer of MurmurHash3) for hashing page numbers:
/// every input bit affects the low bits, which are the ones a power-of-two table uses.
enum PageHashing {
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var bits = value
        bits ^= bits >> 33
        bits &*= 0xff51_afd7_ed55_8ccd
        bits ^= bits >> 33
        bits &*= 0xc4ce_b9fe_1a85_ec53
        bits ^= bits >> 33
        return bits
    }
}

/// A transaction's id. Ids grow by one with every state change of the store, so a page's
/// birth transaction tells which commit wrote it. A root's id is its transaction's id.
package struct TransactionID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    package static let none = TransactionID(0)
    package var next: TransactionID { TransactionID(rawValue + 1) }

    package static func < (lhs: TransactionID, rhs: TransactionID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "transaction \(rawValue)" }
}

/// A pointer to a page together with the transaction that wrote it.
///
/// Every on-disk pointer carries the birth of its target, so a read checks that it found the
/// page it was sent to: a lost or misdirected write, or a stale cached copy of a reused page,
/// is detected instead of being returned as data.
package struct PageReference: Hashable, Sendable, CustomStringConvertible {
    package var page: PageID
    package var birth: TransactionID

    package init(page: PageID, birth: TransactionID) {
        self.page = page
        self.birth = birth
    }

    package static let none = PageReference(page: .none, birth: .none)

    /// As for ``PageID``: a cheap mix of both fields instead of SipHash.
    package func _rawHashValue(seed: Int) -> Int {
        let combined = page.rawValue ^ PageHashing.mix(birth.rawValue ^ UInt64(truncatingIfNeeded: seed))
        return Int(truncatingIfNeeded: PageHashing.mix(combined))
    }
    package var isNone: Bool { page.isNone }
    package var description: String { "\(page) (born in \(birth))" }

    /// Encoded size: page then birth, 8 bytes each.
    package static let byteCount = 16
}
