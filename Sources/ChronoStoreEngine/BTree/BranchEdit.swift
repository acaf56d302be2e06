// A branch in page form with a few separator edits, laid out again as bytes without decoding it.

/// What settling a child's edit needs of its parent branch: its children, read and replaced, and
/// its separators, replaced and inserted. A decoded ``BranchNode`` and a ``BranchEdit`` over a
/// branch still in page form both provide it, so leaf balancing and splits run on either.
protocol BranchEditing: AnyObject {
    /// The number of children: one more than the separators.
    var childCount: Int { get }
    func child(at index: Int) -> PageReference
    /// Points child `index` at `child`.
    func setChild(_ child: PageReference, at index: Int)
    /// Replaces separator `keyIndex` (the first key of child `keyIndex + 1`) with `key`.
    func replaceSeparator(at keyIndex: Int, with key: [UInt8])
    /// Inserts `separator` as key `keyIndex`, with `rightChild` as the child after it.
    func insert(separator: [UInt8], rightChild: PageReference, at keyIndex: Int)
}

extension BranchNode: BranchEditing {
    var childCount: Int { children.count }
    func child(at index: Int) -> PageReference { children[index] }
    func setChild(_ child: PageReference, at index: Int) { children[index] = child }
}

/// A branch page with a few edits next to each other, not decoded: the page's separator entries
/// (key and right child) outside a window are kept as they are, and the window's entries are held
/// decoded. Leaf balancing and splits change a separator or two and a child or three around one
/// place, so the window stays a few entries wide; laying the result out copies the page's other
/// entries as bytes, where decoding the whole branch (an array a key) and encoding it again at
/// commit costs several times more (Docs/Performance.md, "Separator edits on branch bytes").
final class BranchEdit: BranchEditing {
    private struct Entry {
        var key: [UInt8]
        var child: PageReference
    }

    let view: BranchView
    private var firstChild: PageReference
    /// The page's entries `windowStart..<windowEnd` are replaced by `window`.
    private var windowStart = 0
    private var windowEnd = 0
    private var window: [Entry] = []
    /// The size ``BranchNode/byteCount`` would give the edited branch.
    private(set) var byteCount: Int

    init(_ view: BranchView) {
        self.view = view
        firstChild = view.child(at: 0)
        byteCount = view.byteCount
    }

    var keyCount: Int { view.keyCount - (windowEnd - windowStart) + window.count }
    var childCount: Int { keyCount + 1 }

    func child(at index: Int) -> PageReference {
        guard index > 0 else { return firstChild }
        let entry = index - 1
        if entry < windowStart { return view.child(at: index) }
        if entry < windowStart + window.count { return window[entry - windowStart].child }
        return view.child(at: entry - window.count + windowEnd - windowStart + 1)
    }

    func setChild(_ child: PageReference, at index: Int) {
        guard index > 0 else {
            firstChild = child
            return
        }
        window[openEntry(at: index - 1)].child = child
    }

    func replaceSeparator(at keyIndex: Int, with key: [UInt8]) {
        let slot = openEntry(at: keyIndex)
        byteCount += key.count - window[slot].key.count
        window[slot].key = key
    }

    func insert(separator: [UInt8], rightChild: PageReference, at keyIndex: Int) {
        widen(toInsertAt: keyIndex)
        window.insert(Entry(key: separator, child: rightChild), at: keyIndex - windowStart)
        byteCount += NodeLayout.branchEntryByteCount(key: separator)
    }

    /// Widens the window to hold entry `keyIndex`; returns its place in the window.
    private func openEntry(at keyIndex: Int) -> Int {
        widen(toInsertAt: keyIndex)
        if keyIndex == windowStart + window.count { appendPageEntry() }
        return keyIndex - windowStart
    }

    /// Widens the window so that an entry may be inserted at `keyIndex` (at most one past its end).
    private func widen(toInsertAt keyIndex: Int) {
        if window.isEmpty {
            // An empty window (entries are only ever added to it) covers no page entry, so it may
            // move anywhere: entry numbers equal page entry numbers.
            windowStart = keyIndex
            windowEnd = keyIndex
            return
        }
        while keyIndex < windowStart {
            windowStart -= 1
            window.insert(pageEntry(windowStart), at: 0)
        }
        while keyIndex > windowStart + window.count { appendPageEntry() }
    }

    private func appendPageEntry() {
        window.append(pageEntry(windowEnd))
        windowEnd += 1
    }

    private func pageEntry(_ index: Int) -> Entry {
        Entry(key: Array(view.key(at: index)), child: view.child(at: index + 1))
    }

    /// The edited branch decoded (for a split, which the byte layout does not do).
    func decoded() -> BranchNode {
        var keys: [[UInt8]] = []
        var children: [PageReference] = [firstChild]
        keys.reserveCapacity(keyCount)
        children.reserveCapacity(keyCount + 1)
        for index in 0..<keyCount {
            let entry = index - windowStart
            if index >= windowStart && entry < window.count {
                keys.append(window[entry].key)
                children.append(window[entry].child)
            } else {
                let page = index < windowStart ? index : index - window.count + windowEnd - windowStart
                keys.append(Array(view.key(at: page)))
                children.append(view.child(at: page + 1))
            }
        }
        return BranchNode(keys: keys, children: children)
    }

    /// Lays the edited branch out on a new buffer, byte for byte as ``NodeLayout/encode(_:into:)``
    /// encodes it decoded (the header is zero, for sealing). Needs `byteCount` ≤ the page size.
    func laidOut(pageSize: Int) -> PageBuffer {
        precondition(byteCount <= pageSize, "an edited branch that overflows is split decoded")
        let buffer = PageBuffer(uninitializedPageSize: pageSize)
        let bytes = buffer.bytes
        let source = view.page.readOnly
        UnsafeMutableRawBufferPointer(rebasing: bytes[0..<PageHeader.byteCount]).initializeMemory(as: UInt8.self, repeating: 0)
        bytes.storeReference(firstChild, at: NodeLayout.branchFirstChildOffset)
        var cursor = NodeLayout.branchOffsetsStart + 2 * keyCount
        // Entry `slot` of the result goes at `cursor`: its offset, then its bytes.
        func placeOffset(_ slot: Int) {
            bytes.storeLittleEndian(UInt16(cursor), at: NodeLayout.branchOffsetsStart + 2 * slot)
        }
        // A page entry (key length, key, right child) is one stretch of bytes.
        func copyPageEntries(_ range: Range<Int>, toSlot firstSlot: Int) {
            for index in range {
                let offset = Int(source.loadLittleEndian(at: NodeLayout.branchOffsetsStart + 2 * index, as: UInt16.self))
                let length = 2 + Int(source.loadLittleEndian(at: offset, as: UInt16.self)) + PageReference.byteCount
                placeOffset(firstSlot + index - range.lowerBound)
                UnsafeMutableRawBufferPointer(rebasing: bytes[cursor..<(cursor + length)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + length)]))
                cursor += length
            }
        }
        copyPageEntries(0..<windowStart, toSlot: 0)
        for (slot, entry) in zip(windowStart..., window) {
            placeOffset(slot)
            bytes.storeLittleEndian(UInt16(entry.key.count), at: cursor)
            entry.key.withUnsafeBytes { key in
                UnsafeMutableRawBufferPointer(rebasing: bytes[(cursor + 2)..<(cursor + 2 + key.count)]).copyMemory(from: key)
            }
            bytes.storeReference(entry.child, at: cursor + 2 + entry.key.count)
            cursor += 2 + entry.key.count + PageReference.byteCount
        }
        copyPageEntries(windowEnd..<view.keyCount, toSlot: windowStart + window.count)
        UnsafeMutableRawBufferPointer(rebasing: bytes[cursor...]).initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }
}
