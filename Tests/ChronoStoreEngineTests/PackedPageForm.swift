// The planned form of a packed page (Docs/RootChain.md, "Packed history"): a delta of the page with
// its checksum, page number and birth blanked, which the pack index supplies on the way back.
@testable import ChronoStoreEngine

/// Test-side model of a pack entry's delta, used to measure what packed history would store and
/// to check that a rebuilt page passes the same verification as a page read from its slot.
enum PackedPageForm {
    /// Header bytes a packed delta leaves out: checksum (0 ..< 4) and page number and birth
    /// (8 ..< 24). The pack index key gives the page number and birth, its value the checksum.
    static let blankedRanges = [0..<4, 8..<24]

    static func blanked(_ page: [UInt8]) -> [UInt8] {
        guard page.count >= PageHeader.byteCount else { return page }
        var copy = page
        for range in blankedRanges { copy.replaceSubrange(range, with: repeatElement(0, count: range.count)) }
        return copy
    }

    static func delta(of page: [UInt8], base: [UInt8]) -> [UInt8] {
        PageDelta.encode(blanked(page), base: blanked(base))
    }

    static func checksum(of page: [UInt8]) -> UInt32 {
        page.withUnsafeBytes { $0.loadLittleEndian(at: PageHeader.checksumOffset) }
    }

    /// Rebuilds and verifies a packed page as a reader of packed history would.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` for a delta that does not decode, or
    ///   the usual verification errors (checksum, identity, birth) for one that decodes wrongly.
    static func rebuild(
        _ delta: [UInt8], base: [UInt8], reference: PageReference, checksum: UInt32, pageSize: Int
    ) throws -> PageBuffer {
        let page = PageBuffer(pageSize: pageSize)
        let blankedBase = blanked(base)
        do {
            try delta.withUnsafeBytes { deltaBytes in
                try blankedBase.withUnsafeBytes { baseBytes in try PageDelta.decode(deltaBytes, base: baseBytes, into: page.bytes) }
            }
        } catch let error as PageDeltaError {
            throw StoreError.malformedPage(page: reference.page, reason: "packed: \(error)")
        }
        page.bytes.storeLittleEndian(checksum, at: PageHeader.checksumOffset)
        page.bytes.storeLittleEndian(reference.page.rawValue, at: PageHeader.pageIDOffset)
        page.bytes.storeLittleEndian(reference.birth.rawValue, at: PageHeader.birthOffset)
        try page.verify(page: reference.page, kind: nil, birth: reference.birth)
        return page
    }

    /// A pack entry's header: base page number and the base's birth distance (varints; a single
    /// 0 for a keyframe), the original checksum (4), the run length (1), the delta length (varint).
    static func entryHeaderByteCount(for reference: PageReference, base: PageReference?, deltaByteCount: Int) -> Int {
        var count = 4 + 1 + DeltaWriter.varintSize(deltaByteCount)
        if let base {
            count += DeltaWriter.varintSize(Int(base.page.rawValue))
            count += DeltaWriter.varintSize(Int(base.birth.rawValue - reference.birth.rawValue))
        } else {
            count += 1
        }
        return count
    }
}
