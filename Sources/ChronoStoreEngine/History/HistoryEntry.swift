// The history index's value for one retained root: links, redo target, and its lifetime lists.

/// What the history index stores for each retained root.
///
/// Value layout (little-endian, 112 bytes):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 16 | root page (page, birth = root id) |
/// | 16 | 8 | history parent: the head this root was committed on (0 = none); undo goes there |
/// | 24 | 8 | lineage parent: the nearest retained root whose trees this root's trees were derived from (0 = none) |
/// | 32 | 8 | redo target: the child it was most recently undone from, or its newest child (0 = none) |
/// | 40 | 8 | depth: number of history parents above it |
/// | 48 | 8 | commit time, milliseconds since 1970 |
/// | 56 | 24 | dead list: pages alive at the lineage parent that died on the way to this root |
/// | 80 | 24 | new list: pages born after the lineage parent and alive at this root |
/// | 104 | 4 | flags: bit 0 = dead list is the root page's own invalidated list, bit 1 = new list is its introduced list, bit 2 = left behind (see below) |
/// | 108 | 4 | reserved (0) |
///
/// A list whose flag is clear is a chain of list chunks owned by the history index, written when
/// a pruned root's lists were merged into this one (its first chunk's birth says when).
///
/// A root is **left behind** when an undone branch was dropped but a pin (a reader, a snapshot,
/// the durable fallback head) kept this root of it: it is on no line retention keeps, and pruning
/// drops it as soon as nothing pins it, whatever its depth or age. Stores written before this bit
/// existed have it clear, which only means such a root waits for the policy (or `prune()`).
package struct HistoryEntry: Equatable, Sendable {
    static let byteCount = 112

    package var rootPage: PageReference
    package var historyParent: TransactionID
    package var lineageParent: TransactionID
    package var redoTarget: TransactionID
    package var depth: UInt64
    package var timeMilliseconds: Int64
    var deadList: ListDescriptor
    var newList: ListDescriptor
    var deadListIsRootOwned: Bool
    var newListIsRootOwned: Bool
    /// Kept from a dropped branch only by a pin (flag bit 2).
    var isLeftBehind = false

    package var root: TransactionID { rootPage.birth }

    func encoded() -> LeafValue {
        let bytes = [UInt8](byteCount: Self.byteCount) { raw in
            raw.storeReference(rootPage, at: 0)
            raw.storeLittleEndian(historyParent.rawValue, at: 16)
            raw.storeLittleEndian(lineageParent.rawValue, at: 24)
            raw.storeLittleEndian(redoTarget.rawValue, at: 32)
            raw.storeLittleEndian(depth, at: 40)
            raw.storeLittleEndian(timeMilliseconds, at: 48)
            RootRecord.store(deadList, into: raw, at: 56)
            RootRecord.store(newList, into: raw, at: 80)
            let flags = (deadListIsRootOwned ? 1 : 0) | (newListIsRootOwned ? 2 : 0) | (isLeftBehind ? 4 : 0)
            raw.storeLittleEndian(UInt32(flags), at: 104)
        }
        return .inline(bytes)
    }

    static func decode(_ value: LeafValue, page: PageID) throws -> HistoryEntry {
        guard case .inline(let bytes) = value, bytes.count == byteCount else {
            throw StoreError.malformedPage(page: page, reason: "history index entry has the wrong size")
        }
        let entry = bytes.withUnsafeBytes { raw in
            let flags: UInt32 = raw.loadLittleEndian(at: 104)
            var entry = HistoryEntry(
                rootPage: raw.loadReference(at: 0),
                historyParent: TransactionID(raw.loadLittleEndian(at: 16, as: UInt64.self)),
                lineageParent: TransactionID(raw.loadLittleEndian(at: 24, as: UInt64.self)),
                redoTarget: TransactionID(raw.loadLittleEndian(at: 32, as: UInt64.self)),
                depth: raw.loadLittleEndian(at: 40),
                timeMilliseconds: raw.loadLittleEndian(at: 48),
                deadList: RootRecord.loadList(UnsafeRawBufferPointer(raw), at: 56),
                newList: RootRecord.loadList(UnsafeRawBufferPointer(raw), at: 80),
                deadListIsRootOwned: flags & 1 != 0, newListIsRootOwned: flags & 2 != 0)
            entry.isLeftBehind = flags & 4 != 0
            return entry
        }
        // List counts come from disk: bounded as a root page's are, so no arithmetic on them (or
        // encoding them again) can trap.
        guard (0...Int(UInt32.max)).contains(entry.deadList.count), (0...Int(UInt32.max)).contains(entry.newList.count) else {
            throw StoreError.malformedPage(
                page: page, reason: "history entry lists of \(entry.deadList.count) and \(entry.newList.count) pages are impossible")
        }
        // Depths only grow by one per commit; bounding them keeps pruning's sums from overflowing.
        guard entry.depth < 1 << 62 else {
            throw StoreError.malformedPage(page: page, reason: "history entry depth \(entry.depth) is impossible")
        }
        // Parents are older than their children, so every walk up the parents ends.
        guard entry.historyParent < entry.root, entry.lineageParent < entry.root else {
            throw StoreError.malformedPage(page: page, reason: "history entry \(entry.root.rawValue) names a parent that is not older")
        }
        return entry
    }
}

/// Keys of the engine's small index trees.
enum IndexKey {
    /// A big-endian id, so byte order is numeric order.
    static func id(_ value: UInt64) -> [UInt8] {
        [UInt8](byteCount: 8) { raw in raw.storeBytes(of: value.bigEndian, as: UInt64.self) }
    }

    /// Two big-endian ids. One allocation: `id(first) + id(second)` made three, about 1.8 k
    /// instructions a key (see `Array(byteCount:fill:)`).
    static func pair(_ first: UInt64, _ second: UInt64) -> [UInt8] {
        [UInt8](byteCount: 16) { raw in
            raw.storeBytes(of: first.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: second.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
    }

    static func first(of key: UnsafeRawBufferPointer) -> UInt64 { word(key, at: 0) }
    static func second(of key: UnsafeRawBufferPointer) -> UInt64 { word(key, at: 8) }

    /// The big-endian id at `offset`. Keys come from disk, so a key too short for it (only in a
    /// damaged file) reads as if padded with zeros instead of trapping.
    static func word(_ key: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        guard key.count < offset + 8 else { return key.loadLittleEndian(at: offset, as: UInt64.self).byteSwapped }
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(index < key.count ? key[index] : 0) }
        return value
    }
}

extension HistoryEntry {
    /// Pages alive at the lineage parent that this root no longer reaches.
    func deadPages(reader: some TreeReading) throws -> [PageReference] {
        if deadListIsRootOwned { return try LoadedRoot(rootPage, reader: reader).invalidatedPages(reader: reader) }
        return try PageList.read(deadList, owner: nil, inlineOffset: 0, reader: reader)
    }

    /// Pages born since the lineage parent that this root reaches.
    func newPages(reader: some TreeReading) throws -> [PageReference] {
        if newListIsRootOwned { return try LoadedRoot(rootPage, reader: reader).introducedPages(reader: reader) }
        return try PageList.read(newList, owner: nil, inlineOffset: 0, reader: reader)
    }
}
