// Editing a leaf page as bytes: one entry inserted, replaced or removed while the others are copied whole.

extension NodeLayout {
    /// Writes one leaf entry (key length, value field, key, value) at `cursor`; returns where the
    /// next entry starts.
    static func storeLeafEntry(
        key: UnsafeRawBufferPointer, value: LeafValue, into bytes: UnsafeMutableRawBufferPointer, at cursor: Int
    ) -> Int {
        bytes.storeLittleEndian(UInt16(key.count), at: cursor)
        let keyStart = cursor + leafEntryHeaderByteCount
        if let base = key.baseAddress { (bytes.baseAddress! + keyStart).copyMemory(from: base, byteCount: key.count) }
        let valueStart = keyStart + key.count
        switch value {
        case .inline(let inline):
            bytes.storeLittleEndian(UInt32(inline.count), at: cursor + 2)
            inline.withUnsafeBytes { raw in
                if let base = raw.baseAddress { (bytes.baseAddress! + valueStart).copyMemory(from: base, byteCount: raw.count) }
            }
            return valueStart + inline.count
        case .overflow(let reference):
            bytes.storeLittleEndian(overflowFlag, at: cursor + 2)
            bytes.storeReference(reference.index, at: valueStart)
            bytes.storeLittleEndian(reference.length, at: valueStart + PageReference.byteCount)
            return valueStart + OverflowReference.byteCount
        }
    }

    /// Lays out the leaf `view` holds with `key` and `value` at entry `index`: inserted there, or,
    /// with `replacing`, in place of the entry there (same key). Every other entry is copied as
    /// bytes, so nothing is decoded. The caller has checked that the result fits in `page`.
    static func encodeEdited(
        _ view: LeafView, index: Int, replacing: Bool, key: UnsafeRawBufferPointer, value: LeafValue, into page: PageBuffer
    ) {
        let bytes = page.bytes
        let source = view.page.readOnly
        let count = replacing ? view.count : view.count + 1
        var cursor = leafOffsetsStart + 2 * count
        var from = 0
        for target in 0..<count {
            bytes.storeLittleEndian(UInt16(cursor), at: leafOffsetsStart + 2 * target)
            if target == index {
                cursor = storeLeafEntry(key: key, value: value, into: bytes, at: cursor)
                if replacing { from += 1 }
                continue
            }
            let length = view.entryByteCount(from) - 2
            (bytes.baseAddress! + cursor).copyMemory(from: source.baseAddress! + view.entryOffset(from), byteCount: length)
            cursor += length
            from += 1
        }
        precondition(cursor <= bytes.count, "leaf overflows its page")
    }

    /// Lays out the leaf `view` holds without entry `index`, copying the others as bytes.
    static func encodeRemoving(_ view: LeafView, index: Int, into page: PageBuffer) {
        let bytes = page.bytes
        let source = view.page.readOnly
        var cursor = leafOffsetsStart + 2 * (view.count - 1)
        var target = 0
        for from in 0..<view.count where from != index {
            bytes.storeLittleEndian(UInt16(cursor), at: leafOffsetsStart + 2 * target)
            let length = view.entryByteCount(from) - 2
            (bytes.baseAddress! + cursor).copyMemory(from: source.baseAddress! + view.entryOffset(from), byteCount: length)
            cursor += length
            target += 1
        }
    }
}

extension LeafView {
    /// What entry `index` costs in the page: its offset slot, header, key and value (as
    /// `NodeLayout.leafEntryByteCount` counts it).
    func entryByteCount(_ index: Int) -> Int {
        let bytes = page.readOnly
        let offset = entryOffset(index)
        let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
        let field: UInt32 = bytes.loadLittleEndian(at: offset + 2)
        let valueCount = field & NodeLayout.overflowFlag != 0 ? OverflowReference.byteCount : Int(field)
        return NodeLayout.leafEntryFixedByteCount + keyCount + valueCount
    }
}
