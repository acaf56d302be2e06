// Encoding of the free tree: page numbers released at a transaction, keyed so the oldest come first.

/// The free tree maps `(release transaction, sequence)` to a list of page numbers.
///
/// Key: release transaction (8 bytes, big-endian) then sequence (8 bytes, big-endian), so a scan
/// meets the earliest releases first. Value: page numbers, 8 bytes each, little-endian.
///
/// Pages released at transaction `r` may be reused by a later transaction once `r` is durable
/// and no reader (in any process) is reading a root older than `r`. Pages left over from an
/// allocation are written back under release transaction 0, which is always reusable.
enum FreeTree {
    static let keyByteCount = 16

    static func key(release: TransactionID, sequence: UInt64) -> [UInt8] {
        // Big-endian, so byte order equals numeric order.
        [UInt8](byteCount: keyByteCount) { raw in
            raw.storeLittleEndian(release.rawValue.byteSwapped, at: 0)
            raw.storeLittleEndian(sequence.byteSwapped, at: 8)
        }
    }

    static func release(of key: [UInt8]) -> TransactionID {
        key.withUnsafeBytes { raw in TransactionID(IndexKey.first(of: raw)) }
    }

    /// How many page numbers one entry holds, so entries always stay inline in a leaf.
    static func pagesPerEntry(pageSize: Int) -> Int {
        (NodeLayout.maximumEntryByteCount(pageSize: pageSize) - NodeLayout.leafEntryFixedByteCount - keyByteCount) / 8
    }

    static func encode(_ pages: ArraySlice<PageID>) -> [UInt8] {
        [UInt8](byteCount: pages.count * 8) { raw in
            for (position, page) in pages.enumerated() { raw.storeLittleEndian(page.rawValue, at: position * 8) }
        }
    }

    static func decode(_ value: LeafValue, page: PageID) throws -> [PageID] {
        guard case .inline(let bytes) = value, bytes.count % 8 == 0 else {
            throw StoreError.malformedPage(page: page, reason: "free tree entry is malformed")
        }
        return bytes.withUnsafeBytes { raw in
            (0..<(bytes.count / 8)).map { PageID(raw.loadLittleEndian(at: $0 * 8, as: UInt64.self)) }
        }
    }
}

/// The history index maps a root id (8 bytes, big-endian) to its ``HistoryEntry``.
enum HistoryIndex {
    static func key(_ root: TransactionID) -> [UInt8] { IndexKey.id(root.rawValue) }

    static func root(of key: UnsafeRawBufferPointer) -> TransactionID { TransactionID(IndexKey.first(of: key)) }
}
