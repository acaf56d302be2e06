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
    /// bytes, so nothing is decoded. The caller has checked that the result fits in `page`; `page`
    /// may be uninitialized (every byte is written).
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
        zeroHeaderAndTail(bytes, from: cursor)
    }

    /// Zeroes what an edit into a buffer made with `PageBuffer(uninitializedPageSize:)` did not
    /// write: the header (sealed later) and everything after the last entry (the checksum
    /// covers it, and it must be zero).
    static func zeroHeaderAndTail(_ bytes: UnsafeMutableRawBufferPointer, from cursor: Int) {
        bytes.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: PageHeader.byteCount)
        (bytes.baseAddress! + cursor).initializeMemory(as: UInt8.self, repeating: 0, count: bytes.count - cursor)
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
        zeroHeaderAndTail(bytes, from: cursor)
    }
    // MARK: - Leaves laid out by these edits

    /// What a stored leaf's entries cost in all (``leafBaseByteCount`` plus every entry's
    /// ``LeafView/entryByteCount(_:)``), and, when its entries follow the offset slots in key
    /// order with no gaps (as every leaf this engine writes), where the last one ends. One pass;
    /// a page laid out otherwise (crafted, or from another writer) is edited entry by entry.
    static func leafLayout(_ view: LeafView) -> (byteCount: Int, canonicalEnd: Int?) {
        // One read of the page's bytes for the whole pass: every committed leaf an edit copies
        // comes through here, so it reads each entry's offset and header once.
        let bytes = view.page.readOnly
        let count = view.count
        var total = leafBaseByteCount
        var cursor = leafOffsetsStart + 2 * count
        var canonical = true
        for entry in 0..<count {
            let offset = Int(bytes.loadLittleEndian(at: leafOffsetsStart + 2 * entry, as: UInt16.self))
            let length = LeafView.entryByteCount(at: offset, in: bytes)
            total += length
            if canonical {
                canonical = offset == cursor
                cursor += length - 2
            }
        }
        return (total, canonical ? cursor : nil)
    }

    /// Where the last entry of a leaf laid out by ``encodeEdited(_:index:replacing:key:value:into:)``
    /// or ``encodeRemoving(_:index:into:)`` ends: their entries follow the offset slots in key order
    /// with no gaps, so an edit can move whole runs of entries and shift their offsets.
    static func canonicalLeafEnd(_ view: LeafView) -> Int {
        let count = view.count
        guard count > 0 else { return leafOffsetsStart }
        return view.entryOffset(count - 1) + view.entryByteCount(count - 1) - 2
    }

    /// Where a put into a canonical leaf (ending at `end`) moves things: the new entry count, the
    /// growth of the offset slots (2 for an insert), where the old entries start, where the edited
    /// entry starts (`split`) and where the entries after it start (`resume`), and how far those
    /// move (`shiftAfter`: the slot growth and the size change; entries before it move by the
    /// slot growth only).
    private static func putGeometry(
        _ view: LeafView, end: Int, index: Int, replacing: Bool, key: UnsafeRawBufferPointer, value: LeafValue
    ) -> (count: Int, slotGrowth: Int, oldEntriesStart: Int, split: Int, resume: Int, shiftAfter: Int) {
        let oldCount = view.count
        let count = replacing ? oldCount : oldCount + 1
        let slotGrowth = 2 * (count - oldCount)
        let split = index < oldCount ? view.entryOffset(index) : end
        let resume = replacing ? split + view.entryByteCount(index) - 2 : split
        let newEntryByteCount = leafEntryHeaderByteCount + key.count + value.encodedByteCount
        return (count, slotGrowth, leafOffsetsStart + 2 * oldCount, split, resume, slotGrowth + newEntryByteCount - (resume - split))
    }

    /// ``encodeEdited(_:index:replacing:key:value:into:)`` for a leaf laid out by these edits
    /// (ending at `end`): two block copies and one pass over the offsets instead of a copy per
    /// entry. The caller has checked that the result fits.
    static func encodeEditedCanonical(
        _ view: LeafView, end: Int, index: Int, replacing: Bool, key: UnsafeRawBufferPointer, value: LeafValue,
        into page: PageBuffer
    ) {
        let bytes = page.bytes
        let source = view.page.readOnly
        let (count, slotGrowth, oldEntriesStart, split, resume, shiftAfter) = putGeometry(
            view, end: end, index: index, replacing: replacing, key: key, value: value)
        precondition(page !== view.page && end + shiftAfter <= bytes.count, "leaf overflows its page")
        copySlots(from: source, index: 0, to: bytes, index: 0, count: index, adding: slotGrowth)
        bytes.storeLittleEndian(UInt16(split + slotGrowth), at: leafOffsetsStart + 2 * index)
        copySlots(from: source, index: replacing ? index + 1 : index, to: bytes, index: index + 1,
                  count: count - index - 1, adding: shiftAfter)
        let entriesStart = leafOffsetsStart + 2 * count
        (bytes.baseAddress! + entriesStart).copyMemory(from: source.baseAddress! + oldEntriesStart, byteCount: split - oldEntriesStart)
        let cursor = storeLeafEntry(key: key, value: value, into: bytes, at: split + slotGrowth)
        (bytes.baseAddress! + cursor).copyMemory(from: source.baseAddress! + resume, byteCount: end - resume)
        zeroHeaderAndTail(bytes, from: cursor + end - resume)
    }

    /// ``encodeEditedCanonical(_:end:index:replacing:key:value:into:)`` applied to the leaf's own
    /// buffer: the entries after the edited one move by the size change (and the new offset
    /// slot), those before it by the slot, and only bytes the leaf gave up are zeroed. No page is
    /// allocated and the free tail is not rewritten. `key` and `value` must not point into
    /// `page`. The caller has checked that the result fits.
    /// - Returns: where the last entry now ends.
    @discardableResult
    static func editCanonicalInPlace(
        _ page: PageBuffer, end: Int, index: Int, replacing: Bool, key: UnsafeRawBufferPointer, value: LeafValue
    ) -> Int {
        let bytes = page.bytes
        let view = LeafView(page: page)
        let (count, slotGrowth, oldEntriesStart, split, resume, shiftAfter) = putGeometry(
            view, end: end, index: index, replacing: replacing, key: key, value: value)
        let newEnd = end + shiftAfter
        precondition(newEnd <= bytes.count && split <= resume && resume <= end, "leaf overflows its page")
        let base = bytes.baseAddress!
        // The entries move first: those after the edit, then those before it (an insert moves
        // both right, the later run beyond where the earlier one lands). Neither touches the old
        // offset slots, which are read below.
        (base + resume + shiftAfter).moveInitializeMemory(
            as: UInt8.self, from: (base + resume).assumingMemoryBound(to: UInt8.self), count: end - resume)
        if slotGrowth > 0 {
            (base + oldEntriesStart + slotGrowth).moveInitializeMemory(
                as: UInt8.self, from: (base + oldEntriesStart).assumingMemoryBound(to: UInt8.self), count: split - oldEntriesStart)
        }
        // Then the offsets, highest slot first, so an insert reads each old slot before its
        // neighbour overwrites it (the new last slot covers where the earlier run began).
        shiftSlots(bytes, index: index + 1, count: count - index - 1, readingFrom: replacing ? 0 : -1, adding: shiftAfter)
        bytes.storeLittleEndian(UInt16(split + slotGrowth), at: leafOffsetsStart + 2 * index)
        if slotGrowth > 0 { shiftSlots(bytes, index: 0, count: index, readingFrom: 0, adding: slotGrowth) }
        _ = storeLeafEntry(key: key, value: value, into: bytes, at: split + slotGrowth)
        if newEnd < end { (base + newEnd).initializeMemory(as: UInt8.self, repeating: 0, count: end - newEnd) }
        return newEnd
    }

    /// ``encodeRemovingCanonical(_:end:index:into:)`` applied to the leaf's own buffer; only the
    /// bytes the leaf gives up are zeroed.
    /// - Returns: where the last entry now ends.
    @discardableResult
    static func removeCanonicalInPlace(_ page: PageBuffer, end: Int, index: Int) -> Int {
        let bytes = page.bytes
        let view = LeafView(page: page)
        let oldCount = view.count
        let oldEntriesStart = leafOffsetsStart + 2 * oldCount
        let split = view.entryOffset(index)
        let resume = split + view.entryByteCount(index) - 2
        precondition(split <= resume && resume <= end && oldEntriesStart <= split, "removal outside the leaf")
        let removed = resume - split
        let base = bytes.baseAddress!
        // Offsets, lowest first: each new slot reads the old slot at or above it.
        shiftSlots(bytes, index: 0, count: index, readingFrom: 0, adding: -2)
        shiftSlots(bytes, index: index, count: oldCount - 1 - index, readingFrom: 1, adding: -2 - removed)
        // The entries before the removed one move down over the last old slot, those after it
        // down over the removed entry.
        (base + oldEntriesStart - 2).moveInitializeMemory(
            as: UInt8.self, from: (base + oldEntriesStart).assumingMemoryBound(to: UInt8.self), count: split - oldEntriesStart)
        (base + split - 2).moveInitializeMemory(as: UInt8.self, from: (base + resume).assumingMemoryBound(to: UInt8.self), count: end - resume)
        let newEnd = end - 2 - removed
        (base + newEnd).initializeMemory(as: UInt8.self, repeating: 0, count: end - newEnd)
        return newEnd
    }

    /// ``encodeRemoving(_:index:into:)`` for a leaf laid out by these edits (ending at `end`).
    static func encodeRemovingCanonical(_ view: LeafView, end: Int, index: Int, into page: PageBuffer) {
        let bytes = page.bytes
        let source = view.page.readOnly
        let oldCount = view.count
        let oldEntriesStart = leafOffsetsStart + 2 * oldCount
        let split = view.entryOffset(index)
        let resume = split + view.entryByteCount(index) - 2
        precondition(page !== view.page && split <= resume && resume <= end, "removal outside the leaf")
        copySlots(from: source, index: 0, to: bytes, index: 0, count: index, adding: -2)
        copySlots(from: source, index: index + 1, to: bytes, index: index, count: oldCount - 1 - index, adding: -2 - (resume - split))
        let entriesStart = oldEntriesStart - 2
        (bytes.baseAddress! + entriesStart).copyMemory(from: source.baseAddress! + oldEntriesStart, byteCount: split - oldEntriesStart)
        (bytes.baseAddress! + split - 2).copyMemory(from: source.baseAddress! + resume, byteCount: end - resume)
        zeroHeaderAndTail(bytes, from: split - 2 + end - resume)
    }
}

extension NodeLayout {
    // MARK: - Offset slots

    /// Writes `count` offset slots of `target` from `index` on: each the slot of `source` at the
    /// same distance from `sourceIndex`, plus `delta`. One bounds check for the run instead of
    /// one per slot: an edit of a leaf of small entries rewrites a hundred or more slots.
    @inline(__always)
    static func copySlots(
        from source: UnsafeRawBufferPointer, index sourceIndex: Int, to target: UnsafeMutableRawBufferPointer, index: Int,
        count: Int, adding delta: Int
    ) {
        guard count > 0 else { return }
        precondition(
            sourceIndex >= 0 && index >= 0 && leafOffsetsStart + 2 * (sourceIndex + count) <= source.count
                && leafOffsetsStart + 2 * (index + count) <= target.count, "offset slots outside the page")
        let from = source.baseAddress! + leafOffsetsStart + 2 * sourceIndex
        let to = target.baseAddress! + leafOffsetsStart + 2 * index
        for slot in 0..<count {
            let offset = Int(UInt16(littleEndian: from.loadUnaligned(fromByteOffset: 2 * slot, as: UInt16.self)))
            to.storeBytes(of: UInt16(truncatingIfNeeded: offset &+ delta).littleEndian, toByteOffset: 2 * slot, as: UInt16.self)
        }
    }

    /// Rewrites `count` offset slots of `bytes` from `index` on, in place: each becomes the slot
    /// `shift` away from it (0 itself, 1 the next, -1 the previous) plus `delta`, in the order
    /// that reads every slot before it is overwritten.
    @inline(__always)
    static func shiftSlots(_ bytes: UnsafeMutableRawBufferPointer, index: Int, count: Int, readingFrom shift: Int, adding delta: Int) {
        guard count > 0 else { return }
        precondition(
            index >= 0 && index + shift >= 0 && leafOffsetsStart + 2 * (index + count) <= bytes.count
                && leafOffsetsStart + 2 * (index + shift + count) <= bytes.count, "offset slots outside the page")
        let slots = bytes.baseAddress! + leafOffsetsStart
        func move(_ slot: Int) {
            let offset = Int(UInt16(littleEndian: slots.loadUnaligned(fromByteOffset: 2 * (slot + shift), as: UInt16.self)))
            slots.storeBytes(of: UInt16(truncatingIfNeeded: offset &+ delta).littleEndian, toByteOffset: 2 * slot, as: UInt16.self)
        }
        if shift < 0 {
            for slot in stride(from: index + count - 1, through: index, by: -1) { move(slot) }
        } else {
            for slot in index..<(index + count) { move(slot) }
        }
    }
}

extension LeafView {
    /// What entry `index` costs in the page: its offset slot, header, key and value (as
    /// `NodeLayout.leafEntryByteCount` counts it).
    func entryByteCount(_ index: Int) -> Int {
        Self.entryByteCount(at: entryOffset(index), in: page.readOnly)
    }

    /// ``entryByteCount(_:)`` of the entry stored at `offset` of the leaf page `bytes`.
    @inline(__always)
    static func entryByteCount(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        let keyCount = Int(bytes.loadLittleEndian(at: offset, as: UInt16.self))
        let field: UInt32 = bytes.loadLittleEndian(at: offset + 2)
        let valueCount = field & NodeLayout.overflowFlag != 0 ? OverflowReference.byteCount : Int(field)
        return NodeLayout.leafEntryFixedByteCount + keyCount + valueCount
    }
}
