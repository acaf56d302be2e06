// The spec reader's packed history (format version 2): pack index keys and values, pack pages,
// pack entries and the rebuilding of a packed page, from FileFormat.md's "Packed history" alone.

/// A pack index value, by its tag.
enum SpecPackValue: Equatable {
    /// Tag 1: the page is packed; its entry starts at `offset` of pack page (`packPage`, `packBirth`).
    case packed(packPage: UInt64, packBirth: UInt64, offset: Int)
    /// Tag 2: the page is not packed (`run` is the packer's bookkeeping).
    case unpacked(run: UInt8)
    /// Tag 3, under a directory key: what a pack page holds that the index still names.
    case directory(birth: UInt64, liveEntries: UInt64, liveBytes: UInt64)
}

/// A pack entry as stored: its base (none for a keyframe), the original checksum and the delta.
struct SpecPackEntry {
    var base: SpecReference
    var checksum: UInt32
    /// Where the checksum lies in the pack page.
    var checksumOffset: Int
    var delta: [UInt8]
    /// The entry's size in its pack page, from its first byte to the delta's end.
    var byteCount: Int
    /// The page a named entry (version 5, state flag bit 3) says it rebuilds; page 0 when unnamed.
    var named: SpecReference
}

/// What walking the whole pack index found.
struct SpecPackSummary: Equatable {
    var packedPages: UInt64 = 0
    var packedBytes: UInt64 = 0
    var packPages: UInt64 = 0
}

extension SpecReader {
    /// The longest chain of pack entries a rebuild follows (the engine's limit).
    static let packChainLimit = 256

    // MARK: - Keys and values

    /// A page key: page number then birth, each as a length byte n (1 to 8) and n big-endian
    /// bytes without leading zeros (0 is length 1, byte 0).
    /// Page keys put the birth first in a version 3 file whose state has flag bit 2.
    var pageKeysBirthFirst: Bool { formatVersion >= 3 && state.flags & 4 != 0 }
    /// Pack entries begin with the page they rebuild in a version 5 file whose state has flag bit 3.
    var packEntriesNamed: Bool { formatVersion >= 5 && state.flags & 8 != 0 }

    static func pageKey(_ reference: SpecReference, birthFirst: Bool) -> [UInt8] {
        func number(_ value: UInt64) -> [UInt8] {
            let width = max(1, (64 - value.leadingZeroBitCount + 7) / 8)
            return [UInt8(width)] + (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }
        return birthFirst ? number(reference.birth) + number(reference.page) : number(reference.page) + number(reference.birth)
    }

    /// The reference a page key names, or nil for a directory key (`FF` then 8 big-endian bytes).
    static func parseKey(_ key: [UInt8], birthFirst: Bool) throws -> SpecReference? {
        if key.first == 0xFF {
            guard key.count == 9 else { throw SpecViolation("directory key of \(key.count) bytes") }
            return nil
        }
        var position = 0
        func number() throws -> UInt64 {
            guard position < key.count, (1...8).contains(key[position]) else { throw SpecViolation("page key \(key)") }
            let width = Int(key[position])
            guard position + 1 + width <= key.count else { throw SpecViolation("page key \(key) is truncated") }
            let digits = key[(position + 1)..<(position + 1 + width)]
            guard width == 1 || digits.first != 0 else { throw SpecViolation("page key \(key) has a leading zero") }
            position += 1 + width
            return digits.reduce(0) { $0 << 8 | UInt64($1) }
        }
        let (first, second) = (try number(), try number())
        let reference = birthFirst ? SpecReference(page: second, birth: first) : SpecReference(page: first, birth: second)
        guard position == key.count else { throw SpecViolation("page key \(key) has trailing bytes") }
        return reference
    }

    /// Unsigned LEB128 of up to 10 bytes (64 bits), as the pack index and pack entries use.
    static func varint64(_ bytes: [UInt8], _ position: inout Int, end: Int) throws -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<10 {
            guard position < end else { throw SpecViolation("varint runs past its field") }
            let byte = bytes[position]
            position += 1
            guard index < 9 || byte <= 1 else { throw SpecViolation("varint beyond 64 bits") }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return value }
        }
        throw SpecViolation("varint of more than 10 bytes")
    }

    /// `birth + difference`, where the difference must be at least 1 and the sum fit 64 bits.
    static func later(_ birth: UInt64, by difference: UInt64) throws -> UInt64 {
        let (sum, overflow) = birth.addingReportingOverflow(difference)
        guard difference >= 1, !overflow else { throw SpecViolation("birth difference \(difference) after \(birth)") }
        return sum
    }

    /// Parses a value under `key`: tags 1 and 2 belong under page keys, tag 3 under directory keys.
    static func parseValue(_ value: [UInt8], key: SpecReference?) throws -> SpecPackValue {
        var position = 1
        switch (value.first, key) {
        case (1, let key?):
            let packPage = try varint64(value, &position, end: value.count)
            let packBirth = try later(key.birth, by: try varint64(value, &position, end: value.count))
            guard value.count == position + 2 else { throw SpecViolation("tag 1 value of \(value.count) bytes") }
            return .packed(packPage: packPage, packBirth: packBirth, offset: Int(u16(value, position)))
        case (2, _?):
            // The run, then (version 3) the chain's start when recorded: a varint of at least 1.
            guard value.count >= 2 else { throw SpecViolation("tag 2 value of \(value.count) bytes") }
            if value.count > 2 {
                position = 2
                guard try varint64(value, &position, end: value.count) >= 1, position == value.count else {
                    throw SpecViolation("tag 2 value's chain start is malformed")
                }
            }
            return .unpacked(run: value[1])
        case (3, nil):
            let birth = try varint64(value, &position, end: value.count)
            let entries = try varint64(value, &position, end: value.count)
            let bytes = try varint64(value, &position, end: value.count)
            guard position == value.count else { throw SpecViolation("tag 3 value has trailing bytes") }
            return .directory(birth: birth, liveEntries: entries, liveBytes: bytes)
        default:
            throw SpecViolation("pack index value with tag \(value.first ?? 0) under \(key.map { "\($0)" } ?? "a directory key")")
        }
    }

    /// The pack index's value for `reference`, nil when the index has none.
    func packValue(_ reference: SpecReference) throws -> SpecPackValue? {
        guard let value = packIndex[Self.pageKey(reference, birthFirst: pageKeysBirthFirst)] else { return nil }
        return try Self.parseValue(value, key: reference)
    }

    // MARK: - Pack pages and entries

    /// The pack entry of a packed page, read from the pack page its tag-1 value names.
    func packEntry(_ reference: SpecReference) throws -> SpecPackEntry {
        guard case .packed(let packPage, let packBirth, let offset)? = try packValue(reference) else {
            throw SpecViolation("page \(reference.page) born \(reference.birth) is not packed")
        }
        let (pack, end) = try self.packPage(SpecReference(page: packPage, birth: packBirth))
        let entry = try Self.parseEntry(pack, at: offset, end: end, birth: reference.birth, named: packEntriesNamed)
        if packEntriesNamed, entry.named != reference {
            throw SpecViolation("pack entry at \(offset) of pack page \(packPage) names \(entry.named), not \(reference)")
        }
        return entry
    }

    /// A pack page (kind 8) and its used end e: 32 ≤ e ≤ page size, and zero from e on.
    func packPage(_ reference: SpecReference) throws -> (page: [UInt8], end: Int) {
        let pack = try slotPage(reference, kinds: [8])
        let end = Int(Self.u16(pack, 24))
        guard (32...pageSize).contains(end) else { throw SpecViolation("pack page \(reference.page) ends at \(end)") }
        guard pack.withUnsafeBufferPointer({ $0[end...].allSatisfy { $0 == 0 } }) else {
            throw SpecViolation("pack page \(reference.page) has bytes past its end")
        }
        return (pack, end)
    }

    /// The entry at `offset` of a pack page whose used bytes end at `end`, for a packed page
    /// born in `birth`: when named, the page number and birth it rebuilds (the birth then counts
    /// for the base's); base page, base birth − birth (not for a keyframe), checksum, delta.
    static func parseEntry(_ pack: [UInt8], at offset: Int, end: Int, birth: UInt64, named: Bool) throws -> SpecPackEntry {
        guard (32..<end).contains(offset) else { throw SpecViolation("pack entry at \(offset), used bytes end at \(end)") }
        var position = offset
        var birth = birth
        var name = SpecReference(page: 0, birth: 0)
        if named {
            name.page = try varint64(pack, &position, end: end)
            name.birth = try varint64(pack, &position, end: end)
            guard name.page > 0, name.birth > 0 else { throw SpecViolation("pack entry at \(offset) names page \(name.page) born \(name.birth)") }
            birth = name.birth
        }
        var base = SpecReference(page: try varint64(pack, &position, end: end), birth: 0)
        if !base.isNone { base.birth = try later(birth, by: try varint64(pack, &position, end: end)) }
        guard end - position >= 4 else { throw SpecViolation("pack entry at \(offset) is truncated") }
        let checksumOffset = position
        position += 4
        let length = try varint64(pack, &position, end: end)
        guard length <= UInt64(end - position) else { throw SpecViolation("pack entry at \(offset) runs past \(end)") }
        return SpecPackEntry(
            base: base, checksum: u32(pack, checksumOffset), checksumOffset: checksumOffset,
            delta: Array(pack[position..<(position + Int(length))]), byteCount: position + Int(length) - offset, named: name)
    }

    /// The offsets of the entries a pack page holds back to back from 32 to its used end; their
    /// number must be the page's entry count.
    func packPageEntryOffsets(_ reference: SpecReference) throws -> [Int] {
        let (pack, end) = try packPage(reference)
        var offsets: [Int] = []
        var offset = 32
        while offset < end {
            offsets.append(offset)
            offset += try Self.parseEntry(pack, at: offset, end: end, birth: 0, named: packEntriesNamed).byteCount
        }
        guard offsets.count == Self.count(pack) else {
            throw SpecViolation("pack page \(reference.page) holds \(offsets.count) entries, its count says \(Self.count(pack))")
        }
        return offsets
    }

    /// Rebuilds a packed page from its entry: the base resolved (following packed bases), bytes
    /// 0 ..< 4 and 8 ..< 24 of it blanked, the delta decoded, the checksum, page number and birth
    /// stored, and the result checked as a page read from disk.
    func packedPage(_ reference: SpecReference, kinds: Set<UInt8>?, links: Int = 0) throws -> [UInt8] {
        guard links < Self.packChainLimit else { throw SpecViolation("packed: chain of more than \(Self.packChainLimit) entries") }
        let entry = try packEntry(reference)
        var base: [UInt8] = []
        if !entry.base.isNone {
            base = try page(entry.base, kinds: nil, links: links + 1)
            base.replaceSubrange(0..<4, with: repeatElement(0, count: 4))
            base.replaceSubrange(8..<24, with: repeatElement(0, count: 16))
        }
        var rebuilt: [UInt8]
        do {
            rebuilt = try SpecPageDelta.decode(entry.delta, base: base, targetLength: pageSize)
        } catch {
            throw SpecViolation("packed: page \(reference.page) born \(reference.birth): \(error)")
        }
        for index in 0..<4 { rebuilt[index] = UInt8(truncatingIfNeeded: entry.checksum >> (8 * UInt32(index))) }
        for index in 0..<8 {
            rebuilt[8 + index] = UInt8(truncatingIfNeeded: reference.page >> (8 * UInt64(index)))
            rebuilt[16 + index] = UInt8(truncatingIfNeeded: reference.birth >> (8 * UInt64(index)))
        }
        try Self.check(rebuilt, reference, kinds: kinds)
        return rebuilt
    }

    // MARK: - The whole index

    /// Walks the pack index: checks every key and value, that each directory value counts the
    /// live entries and bytes its pack page holds, and that the state's counts are the index's.
    func packSummary() throws -> SpecPackSummary {
        var summary = SpecPackSummary()
        var live: [UInt64: (birth: UInt64, entries: UInt64, bytes: UInt64)] = [:]
        var directory: [UInt64: (birth: UInt64, entries: UInt64, bytes: UInt64)] = [:]
        var offsets: [UInt64: Set<Int>] = [:]  // pack page → where its live entries start
        var previous: SpecReference?
        for (key, value) in packIndexEntries {
            let reference = try Self.parseKey(key, birthFirst: pageKeysBirthFirst)
            func order(_ r: SpecReference) -> (UInt64, UInt64) { pageKeysBirthFirst ? (r.birth, r.page) : (r.page, r.birth) }
            if let reference, let last = previous, order(last) >= order(reference) {
                throw SpecViolation("page keys out of numeric order at page \(reference.page)")
            }
            previous = reference ?? previous
            switch try Self.parseValue(value, key: reference) {
            case .packed(let packPage, let packBirth, let offset):
                offsets[packPage, default: []].insert(offset)
                let size = UInt64(try packEntry(reference!).byteCount)
                summary.packedPages += 1
                summary.packedBytes += size
                let counted = live[packPage] ?? (packBirth, 0, 0)
                guard counted.birth == packBirth else { throw SpecViolation("pack page \(packPage) named with two births") }
                live[packPage] = (packBirth, counted.entries + 1, counted.bytes + size)
            case .unpacked:
                break
            case .directory(let birth, let entries, let bytes):
                summary.packPages += 1
                directory[Self.u64BigEndian(key, 1)] = (birth, entries, bytes)
            }
        }
        guard live.keys.sorted() == directory.keys.sorted(),
            live.allSatisfy({ page, counted in directory[page].map { $0 == counted } ?? false })
        else { throw SpecViolation("pack directory \(directory) disagrees with the live entries \(live)") }
        for (page, named) in offsets {
            let stored = Set(try packPageEntryOffsets(SpecReference(page: page, birth: live[page]!.birth)))
            guard named.isSubset(of: stored) else { throw SpecViolation("pack page \(page): entries at \(named.subtracting(stored).sorted())") }
        }
        let stated = SpecPackSummary(packedPages: state.packedPages, packedBytes: state.packedBytes, packPages: state.packPages)
        guard stated == summary else { throw SpecViolation("state counts \(stated), pack index \(summary)") }
        return summary
    }

    /// Rebuilds every page the pack index names as packed from its pack entry (never from its
    /// slot); only leaf, branch and root pages are packed.
    func rebuildEveryPackedPage() throws -> [(SpecReference, [UInt8])] {
        try packIndexEntries.compactMap { key, value in
            guard let reference = try Self.parseKey(key, birthFirst: pageKeysBirthFirst), case .packed = try Self.parseValue(value, key: reference) else { return nil }
            return (reference, try packedPage(reference, kinds: [1, 2, 5]))
        }
    }
}
