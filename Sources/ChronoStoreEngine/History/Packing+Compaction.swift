// Compaction of packed history: pack pages in the file's tail are copied onto low free pages.

extension WriteTransaction {
    /// Copies every pack page at or beyond `threshold` onto a page `takeFreePage` gives (the
    /// lowest free pages, once compaction loaded them), re-points the index entries and the
    /// directory at the copy, and frees the old page, so the tail can be cut. Returns how many
    /// pack pages moved. O(packed pages) for the scan of the index.
    func relocatePackPages(threshold: UInt64) throws -> Int {
        guard !packWork.tree.root.isNone else { return 0 }
        var moving: [PageID: (birth: TransactionID, entries: UInt64, bytes: UInt64)] = [:]
        var pointers: [(key: [UInt8], reference: PageReference, packPage: PageReference, offset: Int)] = []
        let lower = KeyBound(PackIndex.directoryKey(PageID(threshold)), inclusive: true)
        try packWork.tree.scan(KeyRange(lower: lower), reverse: false, reader: self) { key, value in
            guard let page = PackIndex.packPage(ofDirectoryKey: key),
                case .directory(let birth, let entries, let bytes) = try PackIndex.decode(value, page: packWork.tree.root.page)
            else { return true }
            moving[page] = (birth, entries, bytes)
            return true
        }
        guard !moving.isEmpty else { return 0 }
        try packWork.tree.scan(.all, reverse: false, reader: self) { key, value in
            guard let reference = PackIndex.reference(of: key),
                case .packed(let packPage, let offset) = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth),
                moving[packPage.page] != nil
            else { return true }
            pointers.append((Array(key), reference, packPage, offset))
            return true
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
        return moving.count
    }
}
