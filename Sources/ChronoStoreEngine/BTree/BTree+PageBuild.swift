// Building a tree bottom-up from the entries of leaf pages, copied as bytes: for compaction.

/// Lays out full leaves from entries taken one by one in key order, without decoding them: each
/// entry's bytes are copied into a staging area, and a leaf is written when the next entry would
/// not fit (the same rule as ``BTree/build(from:owner:editor:)``). Checks that the keys ascend
/// strictly, so a damaged source tree (keys out of order, a page reached twice) is an error naming
/// the page, not a tree that breaks its own order.
struct LeafPageBuilder {
    let pageSize: Int
    let owner: PageOwner
    /// The entries of the leaf being filled, laid out back to back as in a page (header, key, value).
    private var staged: [UInt8] = []
    /// Where each staged entry starts in `staged`.
    private var starts: [Int] = []
    /// The last key appended, for the order check.
    private var lastKey: [UInt8] = []
    private(set) var leaves: [(firstKey: [UInt8], reference: PageReference)] = []

    init(pageSize: Int, owner: PageOwner) {
        self.pageSize = pageSize
        self.owner = owner
        staged.reserveCapacity(pageSize)
    }

    /// What the leaf being filled would take with another entry of `entryByteCount` bytes (its
    /// offset slot included).
    private func fits(_ entryByteCount: Int) -> Bool {
        starts.isEmpty || NodeLayout.leafBaseByteCount + 2 * starts.count + staged.count + entryByteCount <= pageSize
    }

    /// Appends entry `index` of `view` (read from page `page`) as its bytes are.
    mutating func append(_ view: LeafView, _ index: Int, page: PageID, editor: some TreeEditing) throws {
        try checkOrder(view.key(at: index), page: page)
        let length = view.entryByteCount(index) - 2
        if !fits(length + 2) { try flush(editor: editor) }
        let offset = view.entryOffset(index)
        staged.append(contentsOf: UnsafeRawBufferPointer(rebasing: view.page.readOnly[offset..<(offset + length)]))
        starts.append(staged.count - length)
    }

    /// Appends `key` with `value` (an entry whose value changed on the way).
    mutating func append(key: UnsafeRawBufferPointer, value: LeafValue, page: PageID, editor: some TreeEditing) throws {
        try checkOrder(key, page: page)
        let length = NodeLayout.leafEntryHeaderByteCount + key.count + value.encodedByteCount
        if !fits(length + 2) { try flush(editor: editor) }
        let start = staged.count
        staged.append(contentsOf: repeatElement(0, count: length))
        staged.withUnsafeMutableBytes { bytes in _ = NodeLayout.storeLeafEntry(key: key, value: value, into: bytes, at: start) }
        starts.append(start)
    }

    private mutating func checkOrder(_ key: UnsafeRawBufferPointer, page: PageID) throws {
        if !(starts.isEmpty && leaves.isEmpty) {
            guard lastKey.withUnsafeBytes({ KeyOrder.compare($0, key) }) < 0 else {
                throw StoreError.malformedPage(page: page, reason: "keys out of order across the tree's leaves")
            }
        }
        lastKey.removeAll(keepingCapacity: true)
        lastKey.append(contentsOf: key)
    }

    /// Writes the leaf being filled onto a new page.
    private mutating func flush(editor: some TreeEditing) throws {
        guard let first = starts.first else { return }
        let buffer = PageBuffer(pageSize: pageSize)
        let bytes = buffer.bytes
        let entriesStart = NodeLayout.leafOffsetsStart + 2 * starts.count
        for (slot, start) in starts.enumerated() {
            bytes.storeLittleEndian(UInt16(entriesStart + start), at: NodeLayout.leafOffsetsStart + 2 * slot)
        }
        staged.withUnsafeBytes { source in
            (bytes.baseAddress! + entriesStart).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
        let keyCount = Int(staged.withUnsafeBytes { $0.loadLittleEndian(at: first, as: UInt16.self) })
        let keyStart = first + NodeLayout.leafEntryHeaderByteCount
        let firstKey = Array(staged[keyStart..<(keyStart + keyCount)])
        let page = try editor.allocatePage(owner: owner)
        editor.setDirty(page, .raw(buffer, kind: .leaf, count: starts.count))
        leaves.append((firstKey, PageReference(page: page, birth: editor.transaction)))
        staged.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
    }

    /// Writes the last leaf and the branch levels above the leaves. Returns the new root.
    mutating func finish(editor: some TreeEditing) throws -> PageReference {
        try flush(editor: editor)
        return try BTree.build(leaves: leaves, owner: owner, editor: editor)
    }
}
