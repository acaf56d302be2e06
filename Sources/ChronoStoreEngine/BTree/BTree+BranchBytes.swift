// Branch copy-on-write on page bytes: an edit below a branch that only changes one child pointer.

extension BTree {
    /// Points child `index` of the branch page `view` (the node at `reference`) at `child`,
    /// without decoding the branch: a branch this transaction holds as bytes is changed in
    /// place; any other (committed, or written out early) is copied onto a fresh page with the
    /// pointer replaced, and the old page is released.
    ///
    /// Most edits below a branch change only which page a child lives on (a child that splits is
    /// the exception, and the caller decodes the branch for it), and a child pointer has a fixed
    /// size, so the copy is the page's bytes with 16 of them replaced. Decoding the branch into
    /// one array per key and encoding it again at commit cost more than the edit below it for a
    /// single put or a batch of scattered puts (issue 14).
    /// - Parameter inPlace: the branch's bytes when this transaction holds them as a dirty page.
    /// - Returns: the branch's reference after the edit.
    func replaceChildOnBytes(
        _ view: BranchView, at reference: PageReference, index: Int, with child: PageReference, inPlace: PageBuffer?,
        editor: some TreeEditing
    ) throws -> PageReference {
        let offset = view.childOffset(at: index)
        if let inPlace {
            inPlace.bytes.storeReference(child, at: offset)
            return reference
        }
        let copy = PageBuffer(uninitializedPageSize: editor.pageSize)
        copy.bytes.copyMemory(from: view.page.readOnly)
        copy.bytes.storeReference(child, at: offset)
        let page = try editor.allocateCopy(of: reference, owner: owner)
        editor.setDirty(page, .raw(copy, kind: .branch, count: view.keyCount))
        return PageReference(page: page, birth: editor.transaction)
    }

    /// Separator edits laid out on one branch's bytes within a transaction; later ones decode it.
    /// A scattered batch settles a branch's children a few times a commit, where a byte layout
    /// (a pass over its entries) beats a decode; a bulk load inserts a separator into the same
    /// branch every few puts, and a decoded branch takes those with an array insert.
    static var branchByteLayoutLimit: UInt8 { 8 }

    /// A branch buffer's header flags byte, until sealing writes it as 0: bit 7 says
    /// ``settleOnBytes`` laid the branch out, bits 0–6 count such layouts in this transaction.
    private static let branchLaidOutByEdit: UInt8 = 0x80

    static func markBranchLaidOut(_ buffer: PageBuffer, layouts: UInt8) {
        buffer.bytes.storeLittleEndian(branchLaidOutByEdit | layouts, at: PageHeader.flagsOffset)
    }

    /// The separator layouts a branch in page form has taken in this transaction, when it may
    /// take another: 0 for a committed page (`ownBytes` nil) or a byte copy not yet laid out,
    /// nil once it took ``branchByteLayoutLimit`` (then it is decoded).
    func branchLayoutsLeft(of ownBytes: PageBuffer?) -> UInt8? {
        guard let ownBytes else { return 0 }
        let flags: UInt8 = ownBytes.bytes.loadLittleEndian(at: PageHeader.flagsOffset)
        guard flags & Self.branchLaidOutByEdit != 0 else { return 0 }
        let layouts = flags & ~Self.branchLaidOutByEdit
        return layouts < Self.branchByteLayoutLimit ? layouts : nil
    }
}

/// What settling a child's edit needs of its parent branch: its children, read and replaced, and
/// its separators, replaced and inserted. A decoded ``BranchNode`` and a ``BranchEdit`` over a
/// branch still in page form both provide it, so leaf balancing and splits run on either.
protocol BranchEditing: AnyObject {
    var childCount: Int { get }
    func child(at index: Int) -> PageReference
    func setChild(_ child: PageReference, at index: Int)
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
/// entries as bytes. Decoding the whole branch instead (one array per key) and encoding it again
/// at commit cost about 28 k instructions a branch of 24-byte keys, a seventh of a scattered batch
/// put at 1M records (Docs/Performance.md, "Eighteenth session").
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
        window[open(index - 1)].child = child
    }

    func replaceSeparator(at keyIndex: Int, with key: [UInt8]) {
        let slot = open(keyIndex)
        byteCount += key.count - window[slot].key.count
        window[slot].key = key
    }

    func insert(separator: [UInt8], rightChild: PageReference, at keyIndex: Int) {
        openInsertion(at: keyIndex)
        window.insert(Entry(key: separator, child: rightChild), at: keyIndex - windowStart)
        byteCount += NodeLayout.branchEntryByteCount(key: separator)
    }

    /// Widens the window to hold entry `keyIndex`; returns its place in the window.
    private func open(_ keyIndex: Int) -> Int {
        openInsertion(at: keyIndex)
        if keyIndex == windowStart + window.count { appendPageEntry() }
        return keyIndex - windowStart
    }

    /// Widens the window so that an entry may be inserted at `keyIndex` (at most one past its end).
    private func openInsertion(at keyIndex: Int) {
        if window.isEmpty && windowStart == windowEnd {
            // An empty window may move anywhere: entry numbers equal page entry numbers.
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
