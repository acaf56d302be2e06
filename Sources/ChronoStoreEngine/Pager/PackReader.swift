// Reading packed history: rebuilding an old page version from its pack entry and base, verified.

/// Rebuilds pages that packing moved out of their slots (see Docs/RootChain.md, "Packed history").
///
/// A page reference first reads its slot; only when the slot no longer holds that version (its
/// birth, checksum or kind differ, or the file is shorter) does the reader look in the pack index
/// of the state being read. A rebuilt page is verified exactly as a page read from its slot
/// (checksum, identity, kind, birth, node structure), so a damaged pack is a typed error naming
/// the page, never wrong data.
final class PackReader {
    let pageFile: PageFile
    let index: BTree
    let keyOrder: PackIndex.KeyOrder
    /// Whether entries begin with the page they rebuild (``PackCounters/namesEntries``).
    let namesEntries: Bool
    let pageCount: UInt64
    /// Reads the index's own pages (never packed).
    let indexReader: SnapshotReader
    /// Versions born before this transaction are looked for in the index before their slot: all
    /// of them for a reader of an old root, whose pages are likely packed; those born at or before
    /// the pack cursor for a head that may reach packed versions (see
    /// ``StateRecord/headMayReachPackedVersions``); none otherwise (the head's pages are hot and
    /// their slots are theirs).
    let packsFirstBelow: UInt64
    /// Every version is looked for in the index before its slot.
    var prefersPacks: Bool { packsFirstBelow == UInt64.max }

    /// Longest chain of deltas a rebuild follows (the packer keeps chains far shorter).
    static let chainLimit = 256

    init(pageFile: PageFile, packs: PackCounters, pageCount: UInt64, packsFirstBelow: UInt64 = 0) {
        self.packsFirstBelow = packsFirstBelow
        self.pageFile = pageFile
        self.index = BTree(root: packs.index, owner: .system)
        self.keyOrder = packs.keyOrder
        self.namesEntries = packs.namesEntries
        self.pageCount = pageCount
        self.indexReader = SnapshotReader(pageFile: pageFile, pageCount: pageCount)
    }

    /// For a reader that prefers packs (an old root's): the version from the page cache (a copy
    /// read and verified before), else rebuilt from its pack entry; nil when it is not packed (the
    /// caller then reads its slot, which holds it for as long as the reader's root is pinned).
    ///
    /// A packed version's slot is free and may be reused by a commit at any time, so it is never
    /// read from the slot here: a view of it through the memory map could change under the reader
    /// after its check (regression: `PackedSlotReuseTests`). The page cache's copy is the reader's
    /// own, so it is safe whatever happens to the slot.
    func readPackedFirst(_ reference: PageReference, kind: PageKind?) throws -> PageBuffer? {
        if let page = pageFile.rebuiltCache.page(reference) { return try checked(page, reference: reference, kind: kind) }
        if let page = pageFile.cache.page(reference) { return try checked(page, reference: reference, kind: kind) }
        guard let page = try rebuild(reference, depth: 0) else { return nil }
        return try checked(page, reference: reference, kind: kind)
    }

    /// For a read of the slot that failed with `error`: the page rebuilt from its pack entry, or
    /// `error` again when the index does not hold it.
    func rebuild(afterSlotRead error: StoreError, _ reference: PageReference, kind: PageKind?) throws -> PageBuffer {
        guard Self.slotMayHoldAnotherVersion(error), let page = try rebuild(reference, depth: 0) else { throw error }
        return try checked(page, reference: reference, kind: kind)
    }

    /// The pack entry of `reference`, if the index has one.
    func entry(_ reference: PageReference) throws -> (entry: PackEntry, packPage: PageReference, offset: Int, byteCount: Int)? {
        guard !index.root.isNone, let value = try index.lookup(PackIndex.key(reference, order: keyOrder), reader: indexReader) else { return nil }
        guard case .packed(let packPage, let offset) = try PackIndex.decode(value, page: index.root.page, owner: reference.birth)
        else { return nil }
        let (page, end) = try packPageWithEnd(packPage)
        let found = try PackEntry.decode(page.readOnly, offset: offset, end: end, page: reference, named: namesEntries, packPage: packPage.page)
        return (found.entry, packPage, offset, found.byteCount)
    }

    /// Rebuilds `reference` from its pack entry, never from its slot (verify checks every entry).
    func rebuiltFromPack(_ reference: PageReference) throws -> PageBuffer? {
        try rebuild(reference, depth: 0)
    }

    /// Rebuilds `reference` from the pack, or nil when the index does not hold it.
    private func rebuild(_ reference: PageReference, depth: Int) throws -> PageBuffer? {
        if let page = pageFile.rebuiltCache.page(reference) { return page }
        guard depth < Self.chainLimit else {
            throw StoreError.malformedPage(page: reference.page, reason: "packed: delta chain longer than \(Self.chainLimit)")
        }
        guard let found = try entry(reference) else { return nil }
        let base = found.entry.base.isNone ? nil : try basePage(found.entry.base, depth: depth)
        let page = try decode(found.entry, base: base, reference: reference)
        // The page asked for is kept, and so are root pages on the way: pruning reads the root
        // pages of the oldest roots one after the other, each a delta against the next one's, so
        // the next prune finds its root page here instead of rebuilding the chain again (a
        // single-put commit under last 1,000 roots rebuilt 3.5 versions a commit). Other versions
        // on the way (leaves and branches of as-of reads) are rarely read themselves.
        if depth == 0 || page.kindByte == PageKind.root.rawValue { pageFile.rebuiltCache.insert(page) }
        return page
    }

    private func basePage(_ base: PageReference, depth: Int) throws -> PageBuffer {
        if let page = pageFile.cache.page(base) ?? pageFile.rebuiltCache.page(base) { return page }
        // A base is usually packed itself by the time its dependants are read: index first.
        if let page = try rebuild(base, depth: depth + 1) { return page }
        return try pageFile.read(base, kind: nil, pageCount: pageCount, cached: true)
    }

    /// Applies the entry's delta to its base (or to nothing, for a keyframe) and verifies the
    /// result as the page `reference`.
    private func decode(_ entry: PackEntry, base: PageBuffer?, reference: PageReference) throws -> PageBuffer {
        let page = PageBuffer(pageSize: pageFile.pageSize)
        let blankedBase = base.map { PackBlanking.blanked($0) } ?? []
        do {
            try entry.delta.withUnsafeBytes { delta in
                try blankedBase.withUnsafeBytes { baseBytes in try PageDelta.decode(delta, base: baseBytes, into: page.bytes) }
            }
        } catch {
            throw StoreError.malformedPage(page: reference.page, reason: "packed: \(error)")
        }
        page.bytes.storeLittleEndian(entry.checksum, at: PageHeader.checksumOffset)
        page.bytes.storeLittleEndian(reference.page.rawValue, at: PageHeader.pageIDOffset)
        page.bytes.storeLittleEndian(reference.birth.rawValue, at: PageHeader.birthOffset)
        try page.verify(page: reference.page, kind: nil, birth: reference.birth)
        if page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue {
            try NodeLayout.validate(page, kind: page.kindByte == PageKind.leaf.rawValue ? .leaf : .branch)
        }
        return page
    }

    /// A pack page, verified (checksum, identity, kind, birth) and cached like any page.
    func packPageBuffer(_ packPage: PageReference) throws -> PageBuffer {
        try packPageWithEnd(packPage).page
    }

    /// A pack page and where its used bytes end, checked.
    private func packPageWithEnd(_ packPage: PageReference) throws -> (page: PageBuffer, end: Int) {
        let page = try pageFile.read(packPage, kind: .pack, pageCount: pageCount, cached: true)
        return (page, try PackPage.usedEnd(of: page, packPage: packPage.page))
    }

    private func checked(_ page: PageBuffer, reference: PageReference, kind: PageKind?) throws -> PageBuffer {
        if let kind, page.kindByte != kind.rawValue {
            throw StoreError.pageKindMismatch(page: reference.page, expected: kind, found: page.kindByte)
        }
        return page
    }

    /// Errors that say the slot holds something other than the version asked for.
    static func slotMayHoldAnotherVersion(_ error: StoreError) -> Bool {
        switch error {
        case .pageChecksumMismatch, .pageIdentityMismatch, .pageKindMismatch, .pageBirthMismatch, .pageOutOfRange: true
        default: false
        }
    }
}

/// The form in which pages are delta-encoded: checksum, page number and birth zeroed (the pack
/// index key and the entry carry them).
enum PackBlanking {
    static func blanked(_ page: PageBuffer) -> [UInt8] {
        var bytes = Array(page.readOnly)
        for index in 0..<4 { bytes[index] = 0 }
        for index in PageHeader.pageIDOffset..<PageHeader.byteCount { bytes[index] = 0 }
        return bytes
    }
}

extension PackEntry {
    /// `page` stored whole: a delta against no base, with the page's checksum.
    static func keyframe(of page: PageBuffer) -> PackEntry {
        PackEntry(
            base: .none, checksum: page.readOnly.loadLittleEndian(at: PageHeader.checksumOffset),
            delta: PageDelta.encode(PackBlanking.blanked(page), base: []))
    }
}
