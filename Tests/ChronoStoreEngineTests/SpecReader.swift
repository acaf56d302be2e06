// An independent reader of format versions 1 to 5, written from Docs/FileFormat.md's tables alone:
// it uses no engine type or constant, so a test comparing it with the engine catches spec drift.
import Foundation

/// A spec-level error: the bytes break a rule FileFormat.md states.
struct SpecViolation: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A page reference as the spec defines it: page number (8) then birth (8); page 0 is "none".
struct SpecReference: Equatable {
    var page: UInt64
    var birth: UInt64
    var isNone: Bool { page == 0 }
}

/// A history index entry (112 bytes).
struct SpecHistoryEntry {
    var root: UInt64
    var rootPage: SpecReference
    var historyParent: UInt64
    var lineageParent: UInt64
    var redoTarget: UInt64
    var depth: UInt64
    var time: Int64
    var flags: UInt32
}

/// The fields of a root page the spec tables name.
struct SpecRoot {
    var id: UInt64
    var parent: SpecReference
    var time: Int64
    var contentSource: UInt64
    var catalog: SpecReference
    var deadCount: UInt64
    var introducedCount: UInt64
    var label: String?
}

/// The fields of a state page.
struct SpecState {
    var transaction: UInt64
    var head: SpecReference
    var historyIndex: SpecReference
    var freeTree: SpecReference
    var pageCount: UInt64
    var tail: UInt64
    var retainedRootCount: UInt64
    var freePageCount: UInt64
    var timeIndex: SpecReference
    var retentionKind: UInt8
    var retentionParameter: UInt64
    var flags: UInt8
    var pruneCursor: UInt64
    var snapshots: SpecReference
    var packIndex: SpecReference
    var packCursor: UInt64
    var packDepth: UInt64
    var packedPages: UInt64
    var packedBytes: UInt64
    var packPages: UInt64
    var headTimeline: SpecReference
    var headTimelineCount: UInt64
    var zeroedThrough: UInt64
    /// The state journal (version 4): tree number → (key, value or nil for a removal), in order.
    var journal: [UInt8: [([UInt8], [UInt8]?)]]
}

struct SpecReader {
    let image: [UInt8]
    let formatVersion: UInt32
    let pageSize: Int
    /// Where the preamble was read: 0, or 1536 when offset 0 was torn by an upgrade.
    let preambleOffset: Int
    let chosenSlot: Int
    let state: SpecState
    /// The pack index, key bytes → value bytes (empty when nothing is packed).
    private(set) var packIndex: [[UInt8]: [UInt8]] = [:]
    /// The pack index's entries in key order.
    private(set) var packIndexEntries: [([UInt8], [UInt8])] = []

    static let magic: [UInt8] = [0x89, 0x43, 0x48, 0x52, 0x4E, 0x0D, 0x0A, 0x1A]

    init(path: String) throws {
        image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Preamble: magic, version, page size, CRC-32C of bytes 0 ..< 60 at 60. A torn preamble
        // is replaced by the copy at 1536 when that is a valid preamble of version 2 or later.
        guard image.count >= 1600 else { throw SpecViolation("shorter than 1,600 bytes") }
        let image = image
        func valid(_ offset: Int) -> Bool {
            Array(image[offset..<(offset + 8)]) == Self.magic
                && Self.crc32c(image[offset..<(offset + 60)]) == Self.u32(image, offset + 60)
        }
        if valid(0) {
            preambleOffset = 0
        } else if valid(1536), Self.u32(image, 1536 + 8) >= 2 {
            preambleOffset = 1536
        } else {
            throw SpecViolation("no valid preamble")
        }
        formatVersion = Self.u32(image, preambleOffset + 8)
        guard (1...5).contains(formatVersion) else { throw SpecViolation("format version \(formatVersion)") }
        pageSize = Int(Self.u32(image, preambleOffset + 12))
        guard pageSize.nonzeroBitCount == 1, (4096...65536).contains(pageSize) else { throw SpecViolation("page size \(pageSize)") }
        // Header slots at 512 and 1024: valid when the checksum matches and the state page is not
        // 0; the larger sequence number wins, slot 0 on a tie.
        var best: (slot: Int, sequence: UInt64, state: SpecReference)?
        for (slot, base) in [(0, 512), (1, 1024)] {
            let sequence = Self.u64(image, base)
            let state = SpecReference(page: Self.u64(image, base + 8), birth: Self.u64(image, base + 16))
            guard Self.crc32c(image[base..<(base + 60)]) == Self.u32(image, base + 60), !state.isNone else { continue }
            if best == nil || sequence > best!.sequence { best = (slot, sequence, state) }
        }
        guard let best else { throw SpecViolation("no valid header slot") }
        chosenSlot = best.slot
        // The state page is bounded by the file length; everything else by the state's mark.
        let fileMark = UInt64(image.count / pageSize)
        let page = try Self.checkedPage(image, pageSize: pageSize, best.state, kinds: [6], mark: fileMark)
        state = try Self.state(page)
        packIndexEntries = try treeEntries(state.packIndex, direct: true)
        packIndex = Dictionary(packIndexEntries, uniquingKeysWith: { first, _ in first })
    }

    static func state(_ page: [UInt8]) throws -> SpecState {
        func reference(_ offset: Int) -> SpecReference { SpecReference(page: u64(page, offset), birth: u64(page, offset + 8)) }
        // The journal: byte count J at 288, records from 296: tree, key length, key, value length
        // (2 bytes, 0xFFFF = removed), value; in increasing (tree, key) order.
        var journal: [UInt8: [([UInt8], [UInt8]?)]] = [:]
        let end = 296 + Int(u16(page, 288))
        guard end <= page.count else { throw SpecViolation("state journal runs past the page") }
        var cursor = 296
        var last: [UInt8]?
        while cursor < end {
            let tree = page[cursor]
            let keyLength = Int(page[cursor + 1])
            let key = Array(page[(cursor + 2)..<(cursor + 2 + keyLength)])
            cursor += 2 + keyLength
            let valueLength = u16(page, cursor)
            cursor += 2
            var value: [UInt8]?
            if valueLength != 0xFFFF {
                value = Array(page[cursor..<(cursor + Int(valueLength))])
                cursor += Int(valueLength)
            }
            guard (1...5).contains(tree), cursor <= end else { throw SpecViolation("state journal record") }
            let order = [tree] + key
            if let last, !precedes(last, order) { throw SpecViolation("state journal order") }
            last = order
            journal[tree, default: []].append((key, value))
        }
        return SpecState(
            transaction: u64(page, 16), head: reference(48), historyIndex: reference(64), freeTree: reference(80),
            pageCount: u64(page, 96), tail: u64(page, 104), retainedRootCount: u64(page, 112), freePageCount: u64(page, 120),
            timeIndex: reference(144), retentionKind: page[160],
            retentionParameter: u64(page, 168), flags: page[161], pruneCursor: u64(page, 176), snapshots: reference(184),
            packIndex: reference(200), packCursor: u64(page, 216), packDepth: u64(page, 224), packedPages: u64(page, 232),
            packedBytes: u64(page, 240), packPages: u64(page, 248), headTimeline: reference(256),
            headTimelineCount: u64(page, 272), zeroedThrough: u64(page, 280), journal: journal)
    }

    // MARK: - Pages

    /// A page's bytes, resolved as "Packed history" says: the slot when it verifies with the
    /// reference's birth, else the pack entry the pack index names, else the slot's failure.
    /// `kinds` nil reads the kind unchecked; `links` counts the pack entries followed so far.
    func page(_ reference: SpecReference, kinds: Set<UInt8>?, links: Int = 0) throws -> [UInt8] {
        do {
            return try slotPage(reference, kinds: kinds)
        } catch let slotFailure {
            guard case .packed? = try packValue(reference) else { throw slotFailure }
            return try packedPage(reference, kinds: kinds, links: links)
        }
    }

    /// A page read from its slot after the checks of "Page references and births": range,
    /// checksum, page number, kind (when named) and birth.
    func slotPage(_ reference: SpecReference, kinds: Set<UInt8>?) throws -> [UInt8] {
        try Self.checkedPage(image, pageSize: pageSize, reference, kinds: kinds, mark: state.pageCount)
    }

    static func checkedPage(_ image: [UInt8], pageSize: Int, _ reference: SpecReference, kinds: Set<UInt8>?, mark: UInt64) throws -> [UInt8] {
        guard reference.page >= 1, reference.page < mark, reference.page < UInt64(image.count / pageSize) else {
            throw SpecViolation("page \(reference.page) out of range")
        }
        let base = Int(reference.page) * pageSize
        let page = Array(image[base..<(base + pageSize)])
        try check(page, reference, kinds: kinds)
        return page
    }

    /// The checks a page passes whether read from its slot or rebuilt from a pack entry.
    static func check(_ page: [UInt8], _ reference: SpecReference, kinds: Set<UInt8>?) throws {
        guard crc32c(page[4...]) == u32(page, 0) else { throw SpecViolation("checksum of page \(reference.page)") }
        guard u64(page, 8) == reference.page else { throw SpecViolation("identity of page \(reference.page)") }
        if let kinds, !kinds.contains(page[4]) { throw SpecViolation("kind \(page[4]) of page \(reference.page)") }
        guard u64(page, 16) == reference.birth else { throw SpecViolation("birth of page \(reference.page)") }
    }

    static func count(_ page: [UInt8]) -> Int { Int(u16(page, 6)) }
    static func reference(_ bytes: [UInt8], _ offset: Int) -> SpecReference {
        SpecReference(page: u64(bytes, offset), birth: u64(bytes, offset + 8))
    }

    // MARK: - Trees

    /// Every (key, value) of a B+tree, in key order, with overflow values read whole. `direct`
    /// reads every page from its slot (the pack index's own pages are never packed).
    func treeEntries(_ root: SpecReference, direct: Bool = false) throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        if !root.isNone { try collect(root, direct: direct, into: &result) }
        for index in result.indices.dropFirst() where !Self.precedes(result[index - 1].0, result[index].0) {
            throw SpecViolation("keys out of order in the tree at page \(root.page)")
        }
        return result
    }

    private func collect(_ node: SpecReference, direct: Bool, into result: inout [([UInt8], [UInt8])]) throws {
        // A child may be a leaf (1) or a branch (2).
        let page = direct ? try slotPage(node, kinds: [1, 2]) : try self.page(node, kinds: [1, 2])
        let n = Self.count(page)
        if page[4] == 2 {
            try collect(Self.reference(page, 24), direct: direct, into: &result)
            for index in 0..<n {
                let entry = Int(Self.u16(page, 40 + 2 * index))
                let keyCount = Int(Self.u16(page, entry))
                try collect(Self.reference(page, entry + 2 + keyCount), direct: direct, into: &result)
            }
            return
        }
        for index in 0..<n {
            let entry = Int(Self.u16(page, 24 + 2 * index))
            let keyCount = Int(Self.u16(page, entry))
            let field = Self.u32(page, entry + 2)
            let key = Array(page[(entry + 6)..<(entry + 6 + keyCount)])
            if field & 0x8000_0000 == 0 {
                result.append((key, Array(page[(entry + 6 + keyCount)..<(entry + 6 + keyCount + Int(field))])))
            } else {
                let index = Self.reference(page, entry + 6 + keyCount)
                result.append((key, try overflowValue(index, length: Self.u64(page, entry + 22 + keyCount))))
            }
        }
    }

    /// A large value: index pages chained by `next` (each with the first one's birth), data
    /// pages read with that birth.
    func overflowValue(_ first: SpecReference, length: UInt64) throws -> [UInt8] {
        var value: [UInt8] = []
        var next = first
        while !next.isNone {
            guard next.birth == first.birth else { throw SpecViolation("overflow index page \(next.page) has another birth") }
            let index = try page(next, kinds: [3])
            for position in 0..<Self.count(index) {
                let data = try page(SpecReference(page: Self.u64(index, 40 + 8 * position), birth: first.birth), kinds: [4])
                value += data[24..<(24 + Self.count(data))]
            }
            next = Self.reference(index, 24)
        }
        guard UInt64(value.count) == length else { throw SpecViolation("overflow value of \(value.count) bytes, expected \(length)") }
        return value
    }

    // MARK: - What the trees hold

    func root(_ reference: SpecReference) throws -> SpecRoot {
        let page = try page(reference, kinds: [5])
        let labelCount = Int(Self.u16(page, 120))
        return SpecRoot(
            id: Self.u64(page, 16), parent: Self.reference(page, 24), time: Int64(bitPattern: Self.u64(page, 40)),
            contentSource: Self.u64(page, 48), catalog: Self.reference(page, 56), deadCount: Self.u64(page, 72),
            introducedCount: Self.u64(page, 96),
            label: labelCount == 0 ? nil : String(decoding: page[128..<(128 + labelCount)], as: UTF8.self))
    }

    /// Collections of a root: name → entries.
    func collections(of root: SpecRoot) throws -> [String: [([UInt8], [UInt8])]] {
        var result: [String: [([UInt8], [UInt8])]] = [:]
        for (name, value) in try treeEntries(root.catalog) {
            let tree = SpecReference(page: Self.u64(value, 0), birth: Self.u64(value, 8))
            let entries = try treeEntries(tree)
            guard Self.u64(value, 16) == UInt64(entries.count) else { throw SpecViolation("catalog count of \(name)") }
            result[String(decoding: name, as: UTF8.self)] = entries
        }
        return result
    }

    /// A journaled tree's entries: its pages' entries with the state journal's records for it
    /// (tree 1 history index, 2 lineage index, 3 time index, 4 head timeline, 5 free tree) applied.
    func journaledEntries(_ root: SpecReference, tree: UInt8) throws -> [([UInt8], [UInt8])] {
        var entries = try treeEntries(root)
        for (key, value) in state.journal[tree] ?? [] {
            entries.removeAll { $0.0 == key }
            if let value { entries.append((key, value)) }
        }
        return entries.sorted { Self.precedes($0.0, $1.0) }
    }

    func history() throws -> [SpecHistoryEntry] {
        try journaledEntries(state.historyIndex, tree: 1).map { key, value in
            guard key.count == 8, value.count == 112 else { throw SpecViolation("history entry size") }
            return SpecHistoryEntry(
                root: Self.u64BigEndian(key, 0), rootPage: SpecReference(page: Self.u64(value, 0), birth: Self.u64(value, 8)),
                historyParent: Self.u64(value, 16), lineageParent: Self.u64(value, 24), redoTarget: Self.u64(value, 32),
                depth: Self.u64(value, 40), time: Int64(bitPattern: Self.u64(value, 48)), flags: Self.u32(value, 104))
        }
    }

    /// The page numbers the free tree lists (values of n × 8 bytes, little-endian), in key order.
    func freePages() throws -> [UInt64] {
        try journaledEntries(state.freeTree, tree: 5).flatMap { key, value -> [UInt64] in
            guard key.count == 16, !value.isEmpty, value.count % 8 == 0 else { throw SpecViolation("free tree entry size") }
            return stride(from: 0, to: value.count, by: 8).map { Self.u64(value, $0) }
        }
    }

    /// (commit time, root id) keys of the time index.
    func timeIndex() throws -> [(UInt64, UInt64)] {
        try journaledEntries(state.timeIndex, tree: 3).map { key, _ in (Self.u64BigEndian(key, 0), Self.u64BigEndian(key, 8)) }
    }

    /// (time of the change, transaction, root that became the head) records of the head timeline.
    func headTimeline() throws -> [(UInt64, UInt64, UInt64)] {
        try journaledEntries(state.headTimeline, tree: 4).map { key, value in
            guard key.count == 16, value.count == 8 else { throw SpecViolation("head timeline record size") }
            return (Self.u64BigEndian(key, 0), Self.u64BigEndian(key, 8), Self.u64(value, 0))
        }
    }

    /// The root id a read as of `milliseconds` (before the present) reads, per "Head timeline":
    /// nil when no record (or, without a timeline, no commit) is at or before it.
    func headRoot(at milliseconds: Int64) throws -> UInt64? {
        let time = UInt64(max(milliseconds, 0))
        if state.headTimeline.isNone && state.journal[4] == nil { return try timeIndex().last { $0.0 <= time }?.1 }
        return try headTimeline().last { $0.0 <= time }?.2
    }

    /// (name, root id, time, record count), in name order.
    func snapshots() throws -> [(String, UInt64, Int64, UInt64)] {
        try treeEntries(state.snapshots).map { name, value in
            (String(decoding: name, as: UTF8.self), Self.u64(value, 0), Int64(bitPattern: Self.u64(value, 8)), Self.u64(value, 16))
        }
    }

    // MARK: - Bytes

    static func u16(_ bytes: [UInt8], _ offset: Int) -> UInt16 { UInt16(truncatingIfNeeded: little(bytes, offset, 2)) }
    static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 { UInt32(truncatingIfNeeded: little(bytes, offset, 4)) }
    static func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 { little(bytes, offset, 8) }
    static func little(_ bytes: [UInt8], _ offset: Int, _ width: Int) -> UInt64 {
        (0..<width).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
    static func u64BigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) } }

    /// Key order: unsigned bytes, first difference wins, a prefix sorts first.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    /// CRC-32C: reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF.
    static func crc32c(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
}
