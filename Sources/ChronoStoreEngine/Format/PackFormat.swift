// Byte layouts of packed history (format versions 2 and 3): pack index keys and values, pack entries.

/// Keys and values of the pack index, the engine tree that finds packed pages (see
/// Docs/FileFormat.md, "Pack index").
///
/// Keys of packed and hot pages: two numbers, each as one length byte (1–8) followed by that many
/// big-endian bytes without leading zeros, so byte order is numeric order: the page number then
/// the birth (``KeyOrder/pageFirst``, every version 2 file), or the birth then the page number
/// (``KeyOrder/birthFirst``, version 3 files whose state says so), which keeps a commit's
/// edits together: the pages a batch packs and the chain lengths it records were mostly born
/// in the last few hundred transactions.
/// Directory keys: `FF` then the pack page number as 8 big-endian bytes (after every page key).
///
/// | value tag | meaning | after the tag |
/// |---|---|---|
/// | 1 | the page is packed | pack page number (varint), pack page birth − the page's birth (varint), offset in the pack page (2, little-endian) |
/// | 2 | the page is hot, and older versions are deltas against it | run: the longest delta chain ending at it (1); then, from format version 3 and when known, the chain's start: the root whose dead list held its oldest version (varint) |
/// | 3 | a pack page (directory key) | the pack page's birth (varint), live entries (varint), live entry bytes (varint) |
package enum PackIndex {
    static let directoryMarker: UInt8 = 0xFF

    /// Which number of a page key comes first (the state's flags say, see ``PackCounters``).
    package enum KeyOrder: Equatable, Sendable {
        case pageFirst
        case birthFirst
    }

    package enum Value: Equatable, Sendable {
        case packed(packPage: PageReference, offset: Int)
        /// The longest chain of deltas packed so far that ends at a hot page, and the root whose
        /// dead list held that chain's oldest version (none when not recorded).
        case run(Int, start: TransactionID)
        case directory(birth: TransactionID, liveEntries: UInt64, liveBytes: UInt64)
    }

    package static func key(_ reference: PageReference, order: KeyOrder) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(18)
        switch order {
        case .pageFirst:
            appendCompact(reference.page.rawValue, to: &key)
            appendCompact(reference.birth.rawValue, to: &key)
        case .birthFirst:
            appendCompact(reference.birth.rawValue, to: &key)
            appendCompact(reference.page.rawValue, to: &key)
        }
        return key
    }

    package static func directoryKey(_ packPage: PageID) -> [UInt8] {
        var key: [UInt8] = [directoryMarker]
        for shift in stride(from: 56, through: 0, by: -8) { key.append(UInt8(truncatingIfNeeded: packPage.rawValue >> UInt64(shift))) }
        return key
    }

    /// The page reference a page key names, or nil for a directory key or a malformed key.
    package static func reference(of key: some Collection<UInt8>, order: KeyOrder) -> PageReference? {
        var bytes = Array(key)[...]
        guard let first = takeCompact(&bytes), let second = takeCompact(&bytes), bytes.isEmpty else { return nil }
        switch order {
        case .pageFirst: return PageReference(page: PageID(first), birth: TransactionID(second))
        case .birthFirst: return PageReference(page: PageID(second), birth: TransactionID(first))
        }
    }

    /// The pack page a directory key names, or nil.
    package static func packPage(ofDirectoryKey key: some Collection<UInt8>) -> PageID? {
        let bytes = Array(key)
        guard bytes.count == 9, bytes[0] == directoryMarker else { return nil }
        return PageID(bytes[1...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// Encodes a value stored under the key of `owner` (whose birth packed distances count from).
    package static func encode(_ value: Value, owner: TransactionID = .none) -> [UInt8] {
        var bytes: [UInt8] = []
        switch value {
        case .packed(let page, let offset):
            bytes.append(1)
            Varint.append(page.page.rawValue, to: &bytes)
            Varint.append(page.birth.rawValue &- owner.rawValue, to: &bytes)
            bytes.append(UInt8(truncatingIfNeeded: offset))
            bytes.append(UInt8(truncatingIfNeeded: offset >> 8))
        case .run(let count, let start):
            bytes = [2, UInt8(clamping: count)]
            if start != .none { Varint.append(start.rawValue, to: &bytes) }
        case .directory(let birth, let entries, let liveBytes):
            bytes.append(3)
            Varint.append(birth.rawValue, to: &bytes)
            Varint.append(entries, to: &bytes)
            Varint.append(liveBytes, to: &bytes)
        }
        return bytes
    }

    /// Decodes a value read from the index stored on `page` (named in errors), under the key of
    /// `owner` (for a page key; ignored for a directory key).
    package static func decode(_ value: LeafValue, page: PageID, owner: TransactionID = .none) throws -> Value {
        guard case .inline(let bytes) = value, let tag = bytes.first else {
            throw StoreError.malformedPage(page: page, reason: "pack index value is not inline")
        }
        var rest = bytes[1...]
        switch tag {
        case 1:
            guard let packPage = Varint.take(&rest), let distance = Varint.take(&rest), rest.count == 2, packPage > 0 else { break }
            let (birth, overflow) = owner.rawValue.addingReportingOverflow(distance)
            guard !overflow, distance > 0 else { break }
            let offset = Int(rest[rest.startIndex]) | Int(rest[rest.startIndex + 1]) << 8
            return .packed(packPage: PageReference(page: PageID(packPage), birth: TransactionID(birth)), offset: offset)
        case 2:
            guard let count = rest.first else { break }
            rest = rest.dropFirst()
            if rest.isEmpty { return .run(Int(count), start: .none) }
            guard let start = Varint.take(&rest), rest.isEmpty, start > 0 else { break }
            return .run(Int(count), start: TransactionID(start))
        case 3:
            guard let birth = Varint.take(&rest), let entries = Varint.take(&rest), let liveBytes = Varint.take(&rest), rest.isEmpty
            else { break }
            return .directory(birth: TransactionID(birth), liveEntries: entries, liveBytes: liveBytes)
        default:
            break
        }
        throw StoreError.malformedPage(page: page, reason: "pack index value with tag \(tag) is malformed")
    }

    private static func appendCompact(_ value: UInt64, to key: inout [UInt8]) {
        let length = max(1, (64 - value.leadingZeroBitCount + 7) / 8)
        key.append(UInt8(length))
        for index in stride(from: length - 1, through: 0, by: -1) { key.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8))) }
    }

    private static func takeCompact(_ bytes: inout ArraySlice<UInt8>) -> UInt64? {
        guard let length = bytes.first, (1...8).contains(length), bytes.count > Int(length) else { return nil }
        let digits = bytes[(bytes.startIndex + 1)...(bytes.startIndex + Int(length))]
        bytes = bytes[(bytes.startIndex + 1 + Int(length))...]
        return digits.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}

/// One packed page inside a pack page: how to rebuild it.
///
/// | field | size |
/// |---|---|
/// | only in named entries (format version 5, stores with secure delete): the page number this entry rebuilds | varint |
/// | only in named entries: that page's birth | varint |
/// | base page number; 0 = a keyframe (no base) | varint |
/// | base birth − this page's birth (absent for a keyframe) | varint |
/// | the page's checksum (bytes 0 ..< 4 of the original page) | 4, little-endian |
/// | delta length | varint |
/// | the delta (``PageDelta``), made with bytes 0 ..< 4 and 8 ..< 24 of both pages zeroed | … |
///
/// Named entries let a commit find the entries still live in a pack page from the page alone:
/// secure delete rewrites a pack page's survivors elsewhere when some of its entries are freed,
/// so that the old page can be zeroed (see `Store+SecureDelete.swift`).
package struct PackEntry: Equatable, Sendable {
    /// The page the delta applies to, or ``PageReference/none`` for a keyframe.
    package var base: PageReference
    package var checksum: UInt32
    package var delta: [UInt8]

    /// Appends this entry, the version `reference` of a page; `named` puts `reference` first.
    package func encode(for reference: PageReference, named: Bool, into bytes: inout [UInt8]) {
        if named {
            Varint.append(reference.page.rawValue, to: &bytes)
            Varint.append(reference.birth.rawValue, to: &bytes)
        }
        Varint.append(base.page.rawValue, to: &bytes)
        if !base.isNone { Varint.append(base.birth.rawValue &- reference.birth.rawValue, to: &bytes) }
        for shift in [0, 8, 16, 24] { bytes.append(UInt8(truncatingIfNeeded: checksum >> UInt32(shift))) }
        Varint.append(UInt64(delta.count), to: &bytes)
        bytes.append(contentsOf: delta)
    }

    /// The bytes ``encode(for:named:into:)`` appends.
    package func encodedByteCount(for reference: PageReference, named: Bool) -> Int {
        var count = Varint.size(base.page.rawValue) + 4 + Varint.size(UInt64(delta.count)) + delta.count
        if !base.isNone { count += Varint.size(base.birth.rawValue &- reference.birth.rawValue) }
        if named { count += Varint.size(reference.page.rawValue) + Varint.size(reference.birth.rawValue) }
        return count
    }

    /// Reads the entry at `offset` of a pack page's bytes. `page` is the version it must rebuild
    /// (needed for unnamed entries, whose base birth counts from it; nil reads a named entry
    /// whatever it names). Returns the entry, the version it rebuilds and its size in the page.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming `packPage` when the entry
    ///   runs past the page's used bytes, its fields are impossible, or it names another page.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, offset: Int, end: Int, page: PageReference?, named: Bool, packPage: PageID
    ) throws -> (entry: PackEntry, page: PageReference, byteCount: Int) {
        let fields = try parse(bytes, offset: offset, end: end, page: page, named: named, packPage: packPage)
        let entry = PackEntry(base: fields.base, checksum: fields.checksum, delta: Array(bytes[fields.delta]))
        return (entry, fields.page, fields.delta.upperBound - offset)
    }

    /// The size of the entry at `offset` (its bytes in the pack page), checked as `decode`
    /// checks it, without copying its delta.
    package static func encodedByteCount(
        _ bytes: UnsafeRawBufferPointer, offset: Int, end: Int, page: PageReference, named: Bool, packPage: PageID
    ) throws -> Int {
        try parse(bytes, offset: offset, end: end, page: page, named: named, packPage: packPage).delta.upperBound - offset
    }

    private static func parse(
        _ bytes: UnsafeRawBufferPointer, offset: Int, end: Int, page expected: PageReference?, named: Bool, packPage: PageID
    ) throws -> (page: PageReference, base: PageReference, checksum: UInt32, delta: Range<Int>) {
        guard offset >= PackPage.entriesOffset, offset < end, end <= bytes.count else {
            throw StoreError.malformedPage(page: packPage, reason: "pack entry offset \(offset) is outside the page's entries")
        }
        // Parse the fields in place; only the delta is copied.
        var position = offset
        func fail(_ reason: String) -> StoreError { .malformedPage(page: packPage, reason: "pack entry at \(offset): \(reason)") }
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < end {
                let byte = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || byte <= 1 else { return nil }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        let page: PageReference
        if named {
            guard let number = varint(), number > 0, let birth = varint(), birth > 0 else { throw fail("truncated or impossible name") }
            page = PageReference(page: PageID(number), birth: TransactionID(birth))
            if let expected, expected != page {
                throw fail("names page \(number) born in \(birth), not page \(expected.page.rawValue) born in \(expected.birth.rawValue)")
            }
        } else {
            guard let expected else { throw fail("an unnamed entry read without the page it rebuilds") }
            page = expected
        }
        guard let basePage = varint() else { throw fail("truncated base") }
        var base = PageReference.none
        if basePage != 0 {
            guard let distance = varint(), distance > 0 else { throw fail("bad base birth") }
            let (baseBirth, overflow) = page.birth.rawValue.addingReportingOverflow(distance)
            guard !overflow else { throw fail("bad base birth") }
            base = PageReference(page: PageID(basePage), birth: TransactionID(baseBirth))
        }
        guard end - position >= 4 else { throw fail("truncated checksum") }
        let checksum: UInt32 = bytes.loadLittleEndian(at: position)
        position += 4
        guard let length = varint(), length <= UInt64(end - position) else { throw fail("delta runs past the page") }
        return (page, base, checksum, position..<(position + Int(length)))
    }
}

/// A pack page (kind 8): pack entries back to back.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 24 | page header; entry count = entries in this page |
/// | 24 | 2 | end of the used bytes (little-endian) |
/// | 26 | 6 | reserved (0) |
/// | 32 | … | entries, each at the offset its index value names |
package enum PackPage {
    static let usedEndOffset = PageHeader.byteCount
    package static let entriesOffset = 32

    /// Bytes of entries a pack page holds: up to the page's end, or on 64 KiB pages one byte
    /// less, since the used end is a 16-bit offset.
    package static func capacity(pageSize: Int) -> Int {
        min(pageSize, Int(UInt16.max)) - entriesOffset
    }

    /// Where the used bytes of the pack page `page` (number `packPage`, named in errors) end, checked.
    package static func usedEnd(of page: PageBuffer, packPage: PageID) throws -> Int {
        let end = Int(page.readOnly.loadLittleEndian(at: usedEndOffset, as: UInt16.self))
        guard end >= entriesOffset, end <= page.pageSize else {
            throw StoreError.malformedPage(page: packPage, reason: "pack page's used bytes end at \(end)")
        }
        return end
    }

    /// Every entry of a pack page of named entries, in the order they lie in it: the version
    /// each rebuilds, the entry, its offset and its size.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming `packPage` when the entries
    ///   do not parse back to back up to the used end.
    package static func namedEntries(
        of page: PageBuffer, packPage: PageID
    ) throws -> [(page: PageReference, entry: PackEntry, offset: Int, byteCount: Int)] {
        let end = try usedEnd(of: page, packPage: packPage)
        var entries: [(page: PageReference, entry: PackEntry, offset: Int, byteCount: Int)] = []
        var offset = entriesOffset
        while offset < end {
            let found = try PackEntry.decode(page.readOnly, offset: offset, end: end, page: nil, named: true, packPage: packPage)
            entries.append((found.page, found.entry, offset, found.byteCount))
            offset += found.byteCount
        }
        return entries
    }
}

/// Unsigned LEB128 integers of up to 64 bits (at most 10 bytes).
enum Varint {
    static func size(_ value: UInt64) -> Int {
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    static func take(_ bytes: inout ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.first {
            bytes = bytes.dropFirst()
            guard shift < 64, shift < 63 || byte <= 1 else { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
