// Laying out a leaf page from runs of entries taken from decoded leaves and from leaf pages.

/// Consecutive entries of one leaf: of a decoded node, or of a page (copied as bytes); or one
/// entry being put.
enum LeafRun {
    case node(LeafNode, Range<Int>)
    case page(LeafView, Range<Int>)
    case entry([UInt8], LeafValue)

    var count: Int {
        switch self {
        case .node(_, let range), .page(_, let range): range.count
        case .entry: 1
        }
    }
}

extension NodeLayout {
    /// Lays out a leaf holding the entries of `runs`, in that order (the caller keeps keys
    /// ascending across runs and has checked that they fit), as ``encodeEdited(_:index:replacing:key:value:into:)``
    /// would: entries follow the offset slots with no gaps. `page` may be uninitialized.
    /// - Returns: the number of entries written.
    static func encode(_ runs: [LeafRun], into page: PageBuffer) -> Int {
        let bytes = page.bytes
        let count = runs.reduce(0) { $0 + $1.count }
        var cursor = leafOffsetsStart + 2 * count
        var slot = 0
        // One entry given as key and value: its offset slot, then the entry.
        func store(_ key: [UInt8], _ value: LeafValue) {
            let length = leafEntryHeaderByteCount + key.count + value.encodedByteCount
            precondition(cursor + length <= bytes.count, "leaf overflows its page")
            bytes.storeLittleEndian(UInt16(cursor), at: leafOffsetsStart + 2 * slot)
            cursor = key.withUnsafeBytes { storeLeafEntry(key: $0, value: value, into: bytes, at: cursor) }
            slot += 1
        }
        for run in runs {
            switch run {
            case .node(let node, let range):
                let (keys, values) = (node.keys, node.values)
                for entry in range { store(keys[entry], values[entry]) }
            case .entry(let key, let value):
                store(key, value)
            case .page(let view, let range):
                let source = view.page.readOnly
                for entry in range {
                    bytes.storeLittleEndian(UInt16(cursor), at: leafOffsetsStart + 2 * slot)
                    let length = view.entryByteCount(entry) - 2
                    precondition(cursor + length <= bytes.count, "leaf overflows its page")
                    (bytes.baseAddress! + cursor).copyMemory(from: source.baseAddress! + view.entryOffset(entry), byteCount: length)
                    cursor += length
                    slot += 1
                }
            }
        }
        precondition(cursor <= bytes.count, "leaf overflows its page")
        zeroHeaderAndTail(bytes, from: cursor)
        return count
    }
}
