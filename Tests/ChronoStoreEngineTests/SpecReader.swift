// An independent reader of format version 1, written from Docs/FileFormat.md's tables alone: it
// uses no engine type or constant, so a test comparing it with the engine catches spec drift.
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
    var pageCount: UInt64
    var tail: UInt64
    var retainedRootCount: UInt64
    var timeIndex: SpecReference
    var retentionKind: UInt8
    var retentionParameter: UInt64
    var flags: UInt8
    var pruneCursor: UInt64
    var snapshots: SpecReference
    var headTimeline: SpecReference
    var headTimelineCount: UInt64
    var zeroedThrough: UInt64
}

struct SpecReader {
    let image: [UInt8]
    let formatVersion: UInt32
    let pageSize: Int
    let chosenSlot: Int
    let state: SpecState

    init(path: String) throws {
        image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Preamble: magic, version, page size, CRC-32C of bytes 0 ..< 60 at 60.
        guard image.count >= 64, Array(image[0..<8]) == [0x89, 0x43, 0x48, 0x52, 0x4E, 0x0D, 0x0A, 0x1A] else {
            throw SpecViolation("no magic")
        }
        guard SpecReader.crc32c(image[0..<60]) == SpecReader.u32(image, 60) else { throw SpecViolation("preamble checksum") }
        formatVersion = SpecReader.u32(image, 8)
        pageSize = Int(SpecReader.u32(image, 12))
        // Header slots at 512 and 1024: valid when the checksum matches and the state page is not
        // 0; the larger sequence number wins, slot 0 on a tie.
        var best: (slot: Int, sequence: UInt64, state: SpecReference)?
        for (slot, base) in [(0, 512), (1, 1024)] {
            let sequence = SpecReader.u64(image, base)
            let state = SpecReference(page: SpecReader.u64(image, base + 8), birth: SpecReader.u64(image, base + 16))
            guard SpecReader.crc32c(image[base..<(base + 60)]) == SpecReader.u32(image, base + 60), !state.isNone else { continue }
            if best == nil || sequence > best!.sequence { best = (slot, sequence, state) }
        }
        guard let best else { throw SpecViolation("no valid header slot") }
        chosenSlot = best.slot
        // The state page is bounded by the file length; everything else by the state's mark.
        let fileMark = UInt64(image.count / pageSize)
        let base = try SpecReader.checkedPage(image, pageSize: pageSize, best.state, kinds: [6], mark: fileMark)
        let bytes = image
        func reference(_ offset: Int) -> SpecReference {
            SpecReference(page: SpecReader.u64(bytes, base + offset), birth: SpecReader.u64(bytes, base + offset + 8))
        }
        state = SpecState(
            transaction: SpecReader.u64(image, base + 16), head: reference(48), historyIndex: reference(64),
            pageCount: SpecReader.u64(image, base + 96), tail: SpecReader.u64(image, base + 104),
            retainedRootCount: SpecReader.u64(image, base + 112), timeIndex: reference(144), retentionKind: image[base + 160],
            retentionParameter: SpecReader.u64(image, base + 168), flags: image[base + 161],
            pruneCursor: SpecReader.u64(image, base + 176), snapshots: reference(184), headTimeline: reference(256),
            headTimelineCount: SpecReader.u64(image, base + 272), zeroedThrough: SpecReader.u64(image, base + 280))
    }

    // MARK: - Pages

    /// The file offset of a page read through `reference`, after the checks of "Page references
    /// and births": range, checksum, page number, kind (when named) and birth.
    func page(_ reference: SpecReference, kinds: Set<UInt8>?) throws -> Int {
        try Self.checkedPage(image, pageSize: pageSize, reference, kinds: kinds, mark: state.pageCount)
    }

    static func checkedPage(_ image: [UInt8], pageSize: Int, _ reference: SpecReference, kinds: Set<UInt8>?, mark: UInt64) throws -> Int {
        guard reference.page >= 1, reference.page < mark, (Int(reference.page) + 1) * pageSize <= image.count else {
            throw SpecViolation("page \(reference.page) out of range")
        }
        let base = Int(reference.page) * pageSize
        guard crc32c(image[(base + 4)..<(base + pageSize)]) == u32(image, base) else {
            throw SpecViolation("checksum of page \(reference.page)")
        }
        guard u64(image, base + 8) == reference.page else { throw SpecViolation("identity of page \(reference.page)") }
        if let kinds, !kinds.contains(image[base + 4]) { throw SpecViolation("kind \(image[base + 4]) of page \(reference.page)") }
        guard u64(image, base + 16) == reference.birth else { throw SpecViolation("birth of page \(reference.page)") }
        return base
    }

    func count(_ base: Int) -> Int { Int(Self.u16(image, base + 6)) }
    func reference(at offset: Int) -> SpecReference { SpecReference(page: Self.u64(image, offset), birth: Self.u64(image, offset + 8)) }

    // MARK: - Trees

    /// Every (key, value) of a B+tree, in key order, with overflow values read whole.
    func treeEntries(_ root: SpecReference) throws -> [([UInt8], [UInt8])] {
        var result: [([UInt8], [UInt8])] = []
        if !root.isNone { try collect(root, into: &result) }
        for index in result.indices.dropFirst() where !Self.precedes(result[index - 1].0, result[index].0) {
            throw SpecViolation("keys out of order in the tree at page \(root.page)")
        }
        return result
    }

    private func collect(_ node: SpecReference, into result: inout [([UInt8], [UInt8])]) throws {
        let base = try page(node, kinds: [1, 2])  // a child may be a leaf (1) or a branch (2)
        let n = count(base)
        if image[base + 4] == 2 {
            try collect(reference(at: base + 24), into: &result)
            for index in 0..<n {
                let entry = base + Int(Self.u16(image, base + 40 + 2 * index))
                let keyCount = Int(Self.u16(image, entry))
                try collect(reference(at: entry + 2 + keyCount), into: &result)
            }
            return
        }
        for index in 0..<n {
            let entry = base + Int(Self.u16(image, base + 24 + 2 * index))
            let keyCount = Int(Self.u16(image, entry))
            let field = Self.u32(image, entry + 2)
            let key = Array(image[(entry + 6)..<(entry + 6 + keyCount)])
            if field & 0x8000_0000 == 0 {
                result.append((key, Array(image[(entry + 6 + keyCount)..<(entry + 6 + keyCount + Int(field))])))
            } else {
                let index = reference(at: entry + 6 + keyCount)
                result.append((key, try overflowValue(index, length: Self.u64(image, entry + 22 + keyCount))))
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
            for position in 0..<count(index) {
                let data = try page(SpecReference(page: Self.u64(image, index + 40 + 8 * position), birth: first.birth), kinds: [4])
                value += image[(data + 24)..<(data + 24 + count(data))]
            }
            next = reference(at: index + 24)
        }
        guard UInt64(value.count) == length else { throw SpecViolation("overflow value of \(value.count) bytes, expected \(length)") }
        return value
    }

    // MARK: - What the trees hold

    func root(_ reference: SpecReference) throws -> SpecRoot {
        let base = try page(reference, kinds: [5])
        let labelCount = Int(Self.u16(image, base + 120))
        return SpecRoot(
            id: Self.u64(image, base + 16), parent: self.reference(at: base + 24), time: Int64(bitPattern: Self.u64(image, base + 40)),
            contentSource: Self.u64(image, base + 48), catalog: self.reference(at: base + 56), deadCount: Self.u64(image, base + 72),
            introducedCount: Self.u64(image, base + 96),
            label: labelCount == 0 ? nil : String(decoding: image[(base + 128)..<(base + 128 + labelCount)], as: UTF8.self))
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

    func history() throws -> [SpecHistoryEntry] {
        try treeEntries(state.historyIndex).map { key, value in
            guard key.count == 8, value.count == 112 else { throw SpecViolation("history entry size") }
            return SpecHistoryEntry(
                root: Self.u64BigEndian(key, 0), rootPage: SpecReference(page: Self.u64(value, 0), birth: Self.u64(value, 8)),
                historyParent: Self.u64(value, 16), lineageParent: Self.u64(value, 24), redoTarget: Self.u64(value, 32),
                depth: Self.u64(value, 40), time: Int64(bitPattern: Self.u64(value, 48)), flags: Self.u32(value, 104))
        }
    }

    /// (commit time, root id) keys of the time index.
    func timeIndex() throws -> [(UInt64, UInt64)] {
        try treeEntries(state.timeIndex).map { key, _ in (Self.u64BigEndian(key, 0), Self.u64BigEndian(key, 8)) }
    }

    /// (time of the change, transaction, root that became the head) records of the head timeline.
    func headTimeline() throws -> [(UInt64, UInt64, UInt64)] {
        try treeEntries(state.headTimeline).map { key, value in
            guard key.count == 16, value.count == 8 else { throw SpecViolation("head timeline record size") }
            return (Self.u64BigEndian(key, 0), Self.u64BigEndian(key, 8), Self.u64(value, 0))
        }
    }

    /// The root id a read as of `milliseconds` (before the present) reads, per "Head timeline":
    /// nil when no record (or, without a timeline, no commit) is at or before it.
    func headRoot(at milliseconds: Int64) throws -> UInt64? {
        let time = UInt64(max(milliseconds, 0))
        if state.headTimeline.isNone { return try timeIndex().last { $0.0 <= time }?.1 }
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
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
}
