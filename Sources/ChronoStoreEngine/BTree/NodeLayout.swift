// Byte layout of leaf and branch pages: sizes, encoding, decoding and structural validation.

/// Leaf page (after the 24-byte page header; header count = entries):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 2·n | offset of each entry from the start of the page, in key order |
/// | … | | entries: key length (2), value field (4), key, value |
///
/// The value field's bit 31 marks an overflow value; then the value is an overflow index
/// reference (16) and the total length (8). Otherwise bits 0–30 give the inline length.
///
/// Branch page (header count = separator keys n; n + 1 children):
///
/// | offset | size | field |
/// |---|---|---|
/// | 24 | 16 | child 0 (page, birth) |
/// | 40 | 2·n | offset of each separator entry |
/// | … | | entries: key length (2), key, right child (page, birth) |
enum NodeLayout {
    static let leafOffsetsStart = PageHeader.byteCount
    static let branchFirstChildOffset = PageHeader.byteCount
    static let branchOffsetsStart = branchFirstChildOffset + PageReference.byteCount
    static let leafBaseByteCount = leafOffsetsStart
    static let branchBaseByteCount = branchOffsetsStart
    /// A leaf entry's own header: key length (2) and value field (4).
    static let leafEntryHeaderByteCount = 2 + 4
    /// What one leaf entry costs beyond its key and value: its offset slot and its header.
    static let leafEntryFixedByteCount = 2 + leafEntryHeaderByteCount
    static let branchEntryFixedByteCount = 2 + 2 + PageReference.byteCount
    static let overflowFlag: UInt32 = 1 << 31

    static func leafEntryByteCount(key: [UInt8], value: LeafValue) -> Int {
        leafEntryFixedByteCount + key.count + value.encodedByteCount
    }

    static func branchEntryByteCount(key: [UInt8]) -> Int {
        branchEntryFixedByteCount + key.count
    }

    /// The largest leaf entry allowed: three always fit in one page, so splits never fail.
    static func maximumEntryByteCount(pageSize: Int) -> Int {
        (pageSize - branchBaseByteCount) / 3
    }

    /// The longest key a store with this page size accepts (1,320 bytes for 4 KiB pages).
    static func maximumKeyByteCount(pageSize: Int) -> Int {
        maximumEntryByteCount(pageSize: pageSize) - leafEntryFixedByteCount - OverflowReference.byteCount
    }

    /// Whether a value of `valueCount` bytes under a key of `keyCount` bytes is stored inline.
    static func storesInline(keyCount: Int, valueCount: Int, pageSize: Int) -> Bool {
        leafEntryFixedByteCount + keyCount + valueCount <= maximumEntryByteCount(pageSize: pageSize)
    }

    /// Where to split an over-full branch so both halves fit.
    static func branchSplitIndex(_ node: BranchNode) -> Int {
        var running = branchBaseByteCount
        let half = node.byteCount / 2
        for index in node.keys.indices {
            running += branchEntryByteCount(key: node.keys[index])
            if running >= half { return min(max(index, 1), node.keys.count - 2) }
        }
        return node.keys.count / 2
    }

    // MARK: - Encoding

    static func encode(_ leaf: LeafNode, into page: PageBuffer) {
        let bytes = page.bytes
        var cursor = leafOffsetsStart + 2 * leaf.keys.count
        for index in leaf.keys.indices {
            bytes.storeLittleEndian(UInt16(cursor), at: leafOffsetsStart + 2 * index)
            let key = leaf.keys[index]
            bytes.storeLittleEndian(UInt16(key.count), at: cursor)
            switch leaf.values[index] {
            case .inline(let value):
                bytes.storeLittleEndian(UInt32(value.count), at: cursor + 2)
                copy(key, into: bytes, at: cursor + leafEntryHeaderByteCount)
                copy(value, into: bytes, at: cursor + leafEntryHeaderByteCount + key.count)
                cursor += leafEntryHeaderByteCount + key.count + value.count
            case .overflow(let reference):
                bytes.storeLittleEndian(overflowFlag, at: cursor + 2)
                let valueStart = cursor + leafEntryHeaderByteCount + key.count
                copy(key, into: bytes, at: cursor + leafEntryHeaderByteCount)
                bytes.storeReference(reference.index, at: valueStart)
                bytes.storeLittleEndian(reference.length, at: valueStart + PageReference.byteCount)
                cursor = valueStart + OverflowReference.byteCount
            }
        }
        precondition(cursor <= bytes.count, "leaf overflows its page")
    }

    static func encode(_ branch: BranchNode, into page: PageBuffer) {
        let bytes = page.bytes
        bytes.storeReference(branch.children[0], at: branchFirstChildOffset)
        var cursor = branchOffsetsStart + 2 * branch.keys.count
        for index in branch.keys.indices {
            bytes.storeLittleEndian(UInt16(cursor), at: branchOffsetsStart + 2 * index)
            let key = branch.keys[index]
            bytes.storeLittleEndian(UInt16(key.count), at: cursor)
            copy(key, into: bytes, at: cursor + 2)
            bytes.storeReference(branch.children[index + 1], at: cursor + 2 + key.count)
            cursor += 2 + key.count + PageReference.byteCount
        }
        precondition(cursor <= bytes.count, "branch overflows its page")
    }

    private static func copy(_ source: [UInt8], into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        source.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            (bytes.baseAddress! + offset).copyMemory(from: base, byteCount: raw.count)
        }
    }

    // MARK: - Validation of stored pages

    /// Checks that every offset and length in a verified leaf or branch page lies inside the page,
    /// so later reads can load without bounds failures, and that its keys strictly ascend. A
    /// page with both kinds of fault is reported for the offset (or the missing children of an
    /// empty branch) first.
    static func validate(_ page: PageBuffer, kind: PageKind) throws {
        let bytes = page.readOnly
        let count = page.entryCount
        let isLeaf = kind == .leaf
        // Reserved, written as 0; an edit in progress keeps its own mark there (never stored).
        guard bytes[PageHeader.flagsOffset] == 0 else {
            throw StoreError.malformedPage(page: page.pageID, reason: "flags byte \(bytes[PageHeader.flagsOffset]) is not 0")
        }
        let offsetsStart = isLeaf ? leafOffsetsStart : branchOffsetsStart
        let entriesStart = offsetsStart + 2 * count
        guard entriesStart <= bytes.count else {
            throw StoreError.malformedPage(page: page.pageID, reason: "entry count \(count) does not fit")
        }
        let fixed = isLeaf ? leafEntryHeaderByteCount : 2
        // Keys are compared with their neighbours in the pass that checks the offsets (each key
        // lies right after its entry's fixed fields); an order fault is held until every offset
        // has checked out.
        var previousKey = UnsafeRawBufferPointer(start: nil, count: 0)
        var firstOutOfOrder: Int?
        for index in 0..<count {
            let offset = Int(bytes.loadLittleEndian(at: offsetsStart + 2 * index, as: UInt16.self))
            guard offset >= entriesStart, offset + fixed <= bytes.count else {
                throw StoreError.malformedPage(page: page.pageID, reason: "entry \(index) offset \(offset) is out of range")
            }
            let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
            var end = offset + fixed + keyCount
            if isLeaf {
                let field: UInt32 = bytes.loadLittleEndian(at: offset + 2)
                end += field & overflowFlag != 0 ? OverflowReference.byteCount : Int(field & ~overflowFlag)
            } else {
                end += PageReference.byteCount
            }
            guard end <= bytes.count, keyCount > 0 || !isLeaf else {
                throw StoreError.malformedPage(page: page.pageID, reason: "entry \(index) runs past the page end")
            }
            let key = UnsafeRawBufferPointer(rebasing: bytes[(offset + fixed)..<(offset + fixed + keyCount)])
            if index > 0, firstOutOfOrder == nil, KeyOrder.compare(previousKey, key) >= 0 { firstOutOfOrder = index }
            previousKey = key
        }
        if !isLeaf && count == 0 && bytes.loadReference(at: branchFirstChildOffset).isNone {
            throw StoreError.malformedPage(page: page.pageID, reason: "branch has no children")
        }
        if let index = firstOutOfOrder {
            throw StoreError.malformedPage(page: page.pageID, reason: "keys \(index - 1) and \(index) are out of order")
        }
    }

    // MARK: - Decoding into editable nodes

    static func decodeLeaf(_ page: PageBuffer) -> LeafNode {
        let view = LeafView(page: page)
        var keys: [[UInt8]] = []
        var values: [LeafValue] = []
        keys.reserveCapacity(view.count + 1)
        values.reserveCapacity(view.count + 1)
        for index in 0..<view.count {
            keys.append(Array(view.key(at: index)))
            values.append(view.value(at: index))
        }
        return LeafNode(keys: keys, values: values)
    }

    static func decodeBranch(_ page: PageBuffer) -> BranchNode {
        let view = BranchView(page: page)
        var keys: [[UInt8]] = []
        var children: [PageReference] = [view.child(at: 0)]
        for index in 0..<view.keyCount {
            keys.append(Array(view.key(at: index)))
            children.append(view.child(at: index + 1))
        }
        return BranchNode(keys: keys, children: children)
    }
}

/// Read access to a validated leaf page without decoding it.
struct LeafView {
    let page: PageBuffer
    var count: Int { page.entryCount }

    @inline(__always)
    func entryOffset(_ index: Int) -> Int {
        Int(page.readOnly.loadLittleEndian(at: NodeLayout.leafOffsetsStart + 2 * index, as: UInt16.self))
    }

    func key(at index: Int) -> UnsafeRawBufferPointer {
        let offset = entryOffset(index)
        let keyCount = Int(page.readOnly.loadLittleEndian(at: offset, as: UInt16.self))
        let start = offset + NodeLayout.leafEntryHeaderByteCount
        return UnsafeRawBufferPointer(rebasing: page.readOnly[start..<(start + keyCount)])
    }

    /// Whether entry `index` holds a large value (in overflow pages).
    func holdsLargeValue(_ index: Int) -> Bool {
        let offset = entryOffset(index)
        let field: UInt32 = page.readOnly.loadLittleEndian(at: offset + 2)
        return field & NodeLayout.overflowFlag != 0
    }

    func value(at index: Int) -> LeafValue {
        let bytes = page.readOnly
        let offset = entryOffset(index)
        let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
        let field: UInt32 = bytes.loadLittleEndian(at: offset + 2)
        let start = offset + NodeLayout.leafEntryHeaderByteCount + keyCount
        if field & NodeLayout.overflowFlag != 0 {
            return .overflow(
                OverflowReference(index: bytes.loadReference(at: start), length: bytes.loadLittleEndian(at: start + 16)))
        }
        return .inline(Array(bytes[start..<(start + Int(field))]))
    }

    /// Binary search: the index of `key`, or where it would be inserted.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        KeyOrder.search(count: count) { KeyOrder.compare(self.key(at: $0), key) }
    }
}

/// Read access to a validated branch page without decoding it.
struct BranchView {
    let page: PageBuffer
    var keyCount: Int { page.entryCount }

    func key(at index: Int) -> UnsafeRawBufferPointer {
        let bytes = page.readOnly
        let offset = Int(bytes.loadLittleEndian(at: NodeLayout.branchOffsetsStart + 2 * index, as: UInt16.self))
        let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
        return UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + keyCount)])
    }

    func child(at index: Int) -> PageReference {
        page.readOnly.loadReference(at: childOffset(at: index))
    }

    /// Where child `index`'s reference is stored in the page.
    func childOffset(at index: Int) -> Int {
        if index == 0 { return NodeLayout.branchFirstChildOffset }
        let bytes = page.readOnly
        let offset = Int(bytes.loadLittleEndian(at: NodeLayout.branchOffsetsStart + 2 * (index - 1), as: UInt16.self))
        let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
        return offset + 2 + keyCount
    }

    /// The size ``BranchNode/byteCount`` would give this branch decoded, from its keys' lengths.
    var byteCount: Int {
        var total = NodeLayout.branchBaseByteCount
        for index in 0..<keyCount { total += NodeLayout.branchEntryFixedByteCount + key(at: index).count }
        return total
    }

    /// The child whose range holds `key`: the number of separators ≤ key.
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        KeyOrder.childIndex(count: keyCount) { KeyOrder.compare(self.key(at: $0), key) }
    }
}
