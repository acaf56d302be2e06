// Compaction of packed history: sparse pack pages are rewritten densely, and the other pack pages
// in the file's tail are copied onto low free pages.

extension WriteTransaction {
    /// Rebuilds a page-first pack index (an upgraded version 2 file's) birth first, on the
    /// lowest free pages, and releases its old pages: compaction rewrites the file's tail anyway,
    /// and birth-first keys make later packing commits cheaper (see Docs/FileFormat.md, "Pack
    /// index"). Values do not change: their distances count from the page key's birth, whichever
    /// number comes first. Returns the pages of the old index it rewrote (0 when nothing was done).
    /// O(entries).
    func rekeyPackIndexBirthFirst() throws -> Int {
        guard storesChainStarts, packWork.counters.keyOrder == .pageFirst, !packWork.tree.root.isNone else { return 0 }
        var entries: [([UInt8], LeafValue)] = []
        entries.reserveCapacity(Int(packWork.counters.packedPages + packWork.counters.packPages))
        try packWork.tree.scan(.all, reverse: false, reader: self) { key, value in
            if let reference = PackIndex.reference(of: key, order: .pageFirst) {
                entries.append((PackIndex.key(reference, order: .birthFirst), value))
            } else {
                entries.append((Array(key), value))
            }
            return true
        }
        entries.sort { KeyOrder.compare($0.0, $1.0) < 0 }
        var oldPages: [PageReference] = []
        try TreePages.forEach(in: packWork.tree.root, reader: self) { page, _ in oldPages.append(page) }
        for page in oldPages { releasePage(page, owner: .system) }
        packWork.tree.root = try BTree.build(from: entries, owner: .system, editor: self)
        packWork.counters.keyOrder = .birthFirst
        packWork.counters.index = packWork.tree.root
        return oldPages.count
    }

    /// Rewrites the live entries of pack pages at most half full (entries whose root was dropped
    /// in the middle of history leave holes) into new, dense pack pages, when that takes fewer
    /// pages; copies every other pack page at or beyond `threshold` onto a page `takeFreePage`
    /// gives (the lowest free pages, once compaction loaded them), re-points the index entries and
    /// the directory at the copy, and frees the old page, so the tail can be cut. Returns how many
    /// pack pages moved or were rewritten. O(packed pages) for the scan of the index.
    func relocatePackPages(threshold: UInt64) throws -> Int {
        guard !packWork.tree.root.isNone else { return 0 }
        var moving: [PageID: (birth: TransactionID, entries: UInt64, bytes: UInt64)] = [:]
        var sparse: [PageID: UInt64] = [:]
        var pointers: [(key: [UInt8], reference: PageReference, packPage: PageReference, offset: Int)] = []
        var repacked: [PageReference] = []
        let capacity = UInt64(PackPage.capacity(pageSize: pageSize))
        try packWork.tree.scan(KeyRange(lower: KeyBound(PackIndex.directoryKey(PageID(0)), inclusive: true)), reverse: false, reader: self) {
            key, value in
            guard let page = PackIndex.packPage(ofDirectoryKey: key),
                case .directory(let birth, let entries, let bytes) = try PackIndex.decode(value, page: packWork.tree.root.page)
            else { return true }
            if bytes * 2 <= capacity { sparse[page] = bytes }
            if page.rawValue >= threshold { moving[page] = (birth, entries, bytes) }
            return true
        }
        // Pages at most half full are rewritten densely when that saves a page; the rest of the
        // tail is copied as it is.
        let sparseBytes = sparse.values.reduce(0, +)
        if UInt64(sparse.count) > (sparseBytes + capacity * 9 / 10 - 1) / (capacity * 9 / 10) {
            for page in sparse.keys { moving[page] = nil }
        } else {
            sparse = [:]
        }
        guard !moving.isEmpty || !sparse.isEmpty else { return 0 }
        try packWork.tree.scan(.all, reverse: false, reader: self) { key, value in
            guard let reference = PackIndex.reference(of: key, order: packWork.counters.keyOrder),
                case .packed(let packPage, let offset) = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth)
            else { return true }
            if moving[packPage.page] != nil { pointers.append((Array(key), reference, packPage, offset)) }
            if sparse[packPage.page] != nil { repacked.append(reference) }
            return true
        }
        // Entries of sparse pages go through the commit's pending entries: written densely into
        // new pack pages at commit, and their old pages freed once the last entry left them.
        for reference in repacked {
            guard let found = try treeReader.packs?.entry(reference) else {
                throw StoreError.malformedPage(page: packWork.tree.root.page, reason: "pack index entry of \(reference) is unreadable")
            }
            repackEntry(reference, found.entry, from: found.packPage.page, byteCount: found.byteCount)
        }
        var copies: [PageID: PageID] = [:]
        for (old, info) in moving.sorted(by: { $0.key < $1.key }) {
            let page = try treeReader.read(PageReference(page: old, birth: info.birth), kind: .pack, cached: false)
            let copy = PageBuffer(pageSize: pageSize)
            copy.bytes.copyMemory(from: page.readOnly)
            let number = try takeFreePage()
            setDirty(number, .raw(copy, kind: .pack, count: page.entryCount))
            allocator.released.append(old)
            copies[old] = number
            _ = try packWork.tree.remove(PackIndex.directoryKey(old), editor: self)
            let directory = PackIndex.Value.directory(birth: transaction, liveEntries: info.entries, liveBytes: info.bytes)
            _ = try packWork.tree.put(PackIndex.directoryKey(number), .inline(PackIndex.encode(directory)), editor: self)
        }
        for pointer in pointers {
            let moved = PackIndex.Value.packed(packPage: PageReference(page: copies[pointer.packPage.page]!, birth: transaction), offset: pointer.offset)
            _ = try packWork.tree.put(pointer.key, .inline(PackIndex.encode(moved, owner: pointer.reference.birth)), editor: self)
        }
        packWork.relocated.merge(copies) { _, new in new }
        packWork.counters.index = packWork.tree.root
        return moving.count + sparse.count
    }
}
