// Freeing packed pages, rebasing deltas whose base is freed, and writing a commit's pack pages.

extension WriteTransaction {
    // MARK: - Freeing

    /// Frees a page of the user-visible trees that no retained root reaches: its slot, or its
    /// pack entry when packing moved it (the slot went back when it was packed). O(log index).
    func freeHistoryPage(_ reference: PageReference) throws {
        if packWork.pending.removeValue(forKey: reference) != nil {
            packWork.packedHere.remove(reference)
            // An entry compaction is rewriting still has its old index value (its old page
            // already lost it).
            if packWork.repacked.remove(reference) != nil { _ = try packWork.tree.remove(packKey(reference), editor: self) }
            return
        }
        packWork.runs[reference] = nil
        guard !packWork.tree.root.isNone else {
            allocator.released.append(reference.page)
            return
        }
        // One descent: the removal returns the value (a lookup first read every node twice).
        guard let value = try packWork.tree.remove(packKey(reference), editor: self) else {
            allocator.released.append(reference.page)
            return
        }
        switch try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth) {
        case .packed(let packPage, let offset):
            // Only the entry's size is needed: its fields are parsed in place, the delta not copied.
            // Read through the transaction: compaction may have copied the pack page in this
            // commit, and the index names the copy, which is not on disk yet (found by review).
            let page = try rawPage(packPage, kind: .pack)
            let end = try PackPage.usedEnd(of: page, packPage: packPage.page)
            let size = try PackEntry.encodedByteCount(
                page.readOnly, offset: offset, end: end, page: reference, named: packWork.counters.namesEntries, packPage: packPage.page)
            loseEntry(in: packPage.page, byteCount: size)
        case .run:
            allocator.released.append(reference.page)
        case .directory:
            throw StoreError.malformedPage(page: packWork.tree.root.page, reason: "pack index key names a pack page")
        }
    }

    /// Moves the live entry of `reference` out of `packPage` into the commit's pending entries:
    /// written into a new pack page at commit (its index value still names the old page until
    /// then), and the old page one entry lighter.
    func repackEntry(_ reference: PageReference, _ entry: PackEntry, from packPage: PageID, byteCount: Int) {
        packWork.pending[reference] = entry
        packWork.repacked.insert(reference)
        loseEntry(in: packPage, byteCount: byteCount)
    }

    func loseEntry(in recordedPage: PageID, byteCount: Int) {
        let packPage = packWork.relocated[recordedPage] ?? recordedPage
        var lost = packWork.lost[packPage] ?? (0, 0)
        lost.entries += 1
        lost.bytes += UInt64(byteCount)
        packWork.lost[packPage] = lost
        packWork.counters.packedPages -= min(packWork.counters.packedPages, 1)
        packWork.counters.packedBytes -= min(packWork.counters.packedBytes, UInt64(byteCount))
    }

    /// Before pruning frees `freed` (pages of the dropped root's new list), rewrites the packed
    /// pages of its dead list whose delta is against one of them: a base is born in the root
    /// whose dead list holds its dependants, and merging keeps the two together, so these are
    /// all of them. Each becomes a keyframe; one packed in this very commit goes back to its slot
    /// instead (its bytes are still there); one too large for a pack page whole becomes a delta
    /// against the page of `replacements` (the merged child's new list, born in the root whose
    /// dead list it joins) that took over its keys. Returns false, changing nothing, when some
    /// dependant fits none of these (a nearly full page of incompressible bytes with no
    /// replacement): the caller keeps the root for now. O(|dead list|) index lookups.
    func rebaseDependants(of freed: [PageReference], deadList dead: [PageReference], replacements: [PageReference] = []) throws -> Bool {
        let packs = treeReader.packs
        guard !freed.isEmpty, !dead.isEmpty, packs != nil || !packWork.pending.isEmpty else { return true }
        let freedSet = Set(freed)
        let capacity = PackPage.capacity(pageSize: pageSize)
        var candidates: BaseCandidates?
        var rewrites: [(reference: PageReference, entry: PackEntry)] = []
        var unpacked: [(reference: PageReference, released: Int)] = []
        for reference in dead {
            let base: PageReference
            if let pending = packWork.pending[reference] {
                base = pending.base
            } else {
                guard let packs, !packWork.tree.root.isNone,
                    let value = try packWork.tree.lookup(packKey(reference), reader: self),
                    case .packed = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth),
                    let found = try packs.entry(reference)
                else { continue }
                base = found.entry.base
            }
            guard !base.isNone, freedSet.contains(base) else { continue }
            // Only a version a packing walk of this commit packed gave its slot back here; an entry
            // rewritten in this commit (by an earlier rebase, compaction or secure delete) gave it
            // back long ago, and the slot's page number may be released now for the newer page
            // that reused it.
            if packWork.packedHere.contains(reference), let released = allocator.released.lastIndex(of: reference.page) {
                unpacked.append((reference, released))
                continue
            }
            let page = try treeReader.read(reference, kind: nil, cached: false)
            var entry = PackEntry.keyframe(of: page)
            if packedByteCount(entry, reference) > capacity, !replacements.isEmpty {
                if candidates == nil { candidates = try BaseCandidates(replacements, reader: treeReader) }
                if let replacement = candidates?.base(for: page), !freedSet.contains(replacement.reference),
                    try !isPacked(replacement.reference)
                {
                    entry = makeEntry(page, base: replacement)
                }
            }
            guard packedByteCount(entry, reference) <= capacity else { return false }
            rewrites.append((reference, entry))
        }
        for (reference, released) in unpacked.sorted(by: { $0.released > $1.released }) {
            // Packed in this commit: the slot was never given back, so the page simply stays.
            allocator.released.remove(at: released)
            packWork.pending[reference] = nil
            packWork.packedHere.remove(reference)
            // Its own chain length went with the entry: count it as long as allowed.
            packWork.runs[reference] = .full
        }
        for (reference, entry) in rewrites {
            if packWork.pending[reference] == nil {
                // The old entry goes; the page stays packed, now whole or against its replacement.
                _ = try packWork.tree.remove(packKey(reference), editor: self)
                if let found = try packs?.entry(reference) { loseEntry(in: found.packPage.page, byteCount: found.byteCount) }
            }
            if !entry.base.isNone {
                packWork.runs[entry.base] = .full
            }
            packWork.pending[reference] = entry
        }
        return true
    }

    /// Whether `reference` is packed (in this commit or before): a chain through it is bounded
    /// only by its own entry, so nothing new is rebased onto it.
    private func isPacked(_ reference: PageReference) throws -> Bool {
        if packWork.pending[reference] != nil { return true }
        guard !packWork.tree.root.isNone, let value = try packWork.tree.lookup(packKey(reference), reader: self) else { return false }
        if case .packed = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth) { return true }
        return false
    }

    /// Before pruning frees `dropped`'s root page, rewrites its lineage parent's packed root page
    /// as a keyframe when it is a delta against it. A root page's base is always the root page of
    /// one of its lineage children (lineage links change only when the parent itself is dropped),
    /// so the lineage parent's is the only root page that can depend on it. O(log index).
    func rebaseRootDependant(of dropped: HistoryEntry, _ trees: HistoryTrees) throws -> Bool {
        guard dropped.lineageParent != .none, treeReader.packs != nil || !packWork.pending.isEmpty,
            let parent = try trees.entry(dropped.lineageParent, reader: self)
        else { return true }
        return try rebaseDependants(of: [dropped.rootPage], deadList: [parent.rootPage])
    }

    // MARK: - Writing a commit's packs

    /// Writes pending entries into new pack pages (largest first, each into the first page with
    /// room), their index entries, chain lengths, and the directory; frees pack pages whose last
    /// entry went. Runs before the free tree settles.
    func finishPacking() throws {
        // Freeing alone (a hot page's run dropped) may have edited the index.
        defer { packWork.counters.index = packWork.tree.root }
        guard !packWork.pending.isEmpty || !packWork.lost.isEmpty || !packWork.runs.isEmpty else { return }
        try repackSurvivorsOfSecureDelete()
        try writePendingEntries()
        for (reference, run) in packWork.runs where run.length > 0 && packWork.pending[reference] == nil {
            // A base that is itself packed keeps its entry; its chain is bounded by the reader's limit.
            let key = packKey(reference)
            if let value = try packWork.tree.lookup(key, reader: self),
                case .packed = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth)
            {
                continue
            }
            // A chain's start is a version 3 field: a file another open handle kept at version 2
            // (see `upgradeFormatIfNeeded`) gets runs as version 2 wrote them.
            let start = storesChainStarts ? run.start : .none
            _ = try packWork.tree.put(key, .inline(PackIndex.encode(.run(run.length, start: start))), editor: self)
        }
        for (packPage, lost) in packWork.lost.sorted(by: { $0.key < $1.key }) {
            let key = PackIndex.directoryKey(packPage)
            guard let value = try packWork.tree.lookup(key, reader: self),
                case .directory(let birth, let entries, let bytes) = try PackIndex.decode(value, page: packWork.tree.root.page),
                entries >= lost.entries
            else {
                throw StoreError.malformedPage(page: packPage, reason: "pack directory does not account for this pack page")
            }
            if entries == lost.entries {
                _ = try packWork.tree.remove(key, editor: self)
                // A copy compaction made in this commit is dropped unwritten (its slot recycled).
                releasePage(PageReference(page: packPage, birth: birth), owner: .system)
                packWork.counters.packPages -= min(packWork.counters.packPages, 1)
            } else {
                let left = PackIndex.Value.directory(
                    birth: birth, liveEntries: entries - lost.entries, liveBytes: bytes - min(bytes, lost.bytes))
                _ = try packWork.tree.put(key, .inline(PackIndex.encode(left)), editor: self)
            }
        }
        packWork.pending = [:]
        packWork.packedHere = []
        packWork.deaths = [:]
        packWork.survivors = [:]
        packWork.pendingBytes = 0
        packWork.repacked = []
        packWork.runs = [:]
        packWork.lost = [:]
        // Nothing packed is left: chain lengths mean nothing without packed versions.
        if packWork.counters.packedPages == 0, packWork.counters.packPages == 0, !packWork.tree.root.isNone {
            var pages: [PageReference] = []
            try TreePages.forEach(in: packWork.tree.root, reader: self) { page, _ in pages.append(page) }
            for page in pages { releasePage(page, owner: .system) }
            packWork.tree.root = .none
            packWork.counters.keyOrder = packWork.newIndexKeyOrder
            packWork.counters.namesEntries = packWork.newIndexNamesEntries
        }
        packWork.counters.index = packWork.tree.root
    }

    /// With secure delete, a pack page that lost entries in this commit but not all of them
    /// would keep the freed entries' bytes as long as it lives. Its surviving entries (named
    /// entries: the page lists them itself; live when the index still points at them there)
    /// go through the commit's pending entries into new pack pages, so the old page loses its
    /// last entry and is freed, and zeroed with the other freed pages once reusable (see
    /// `Store+SecureDelete.swift`). O(entries of those pages) index lookups.
    private func repackSurvivorsOfSecureDelete() throws {
        guard base.state.secureDelete, packWork.counters.namesEntries, !packWork.lost.isEmpty, !packWork.tree.root.isNone else { return }
        var partly: [(packPage: PageID, birth: TransactionID)] = []
        for (packPage, lost) in packWork.lost {
            guard let value = try packWork.tree.lookup(PackIndex.directoryKey(packPage), reader: self),
                case .directory(let birth, let entries, _) = try PackIndex.decode(value, page: packWork.tree.root.page),
                entries > lost.entries
            else {
                // Emptied (freed below), or a directory that does not account for it (reported below).
                continue
            }
            partly.append((packPage, birth))
        }
        // Older pack pages first, each page's entries in the order they lie in it: the order in
        // which they were placed, by death (see `writePendingEntries`), which their copies keep.
        for (packPage, birth) in partly.sorted(by: { ($0.birth, $0.packPage) < ($1.birth, $1.packPage) }) {
            // Through the transaction: a pack page compaction copied in this commit is not on disk yet.
            let page = try rawPage(PageReference(page: packPage, birth: birth), kind: .pack)
            for survivor in try PackPage.namedEntries(of: page, packPage: packPage) {
                guard packWork.pending[survivor.page] == nil,
                    let value = try packWork.tree.lookup(packKey(survivor.page), reader: self),
                    case .packed(let holder, let offset) = try PackIndex.decode(
                        value, page: packWork.tree.root.page, owner: survivor.page.birth),
                    holder.page == packPage, offset == survivor.offset
                else { continue }
                packWork.survivors[survivor.page] = packWork.survivors.count
                repackEntry(survivor.page, survivor.entry, from: packPage, byteCount: survivor.byteCount)
            }
        }
    }

    private func writePendingEntries() throws {
        guard !packWork.pending.isEmpty else { return }
        let capacity = PackPage.capacity(pageSize: pageSize)
        var encoded: [(PageReference, [UInt8])] = packWork.pending.map { reference, entry in
            var bytes: [UInt8] = []
            entry.encode(for: reference, named: packWork.counters.namesEntries, into: &bytes)
            return (reference, bytes)
        }
        // Every path that adds an entry checks its size; this keeps a missed check from writing
        // past a pack page (the commit fails instead, writing nothing).
        if let (reference, bytes) = encoded.first(where: { $0.1.count > capacity }) {
            throw StoreError.malformedPage(page: reference.page, reason: "its pack entry (\(bytes.count) bytes) exceeds a pack page")
        }
        let byDeath = placesByDeath
        if byDeath {
            // Secure delete: in the order pruning will free them, each page filled before the
            // next is started, so a page's entries are freed together or nearly (those of one
            // root are), and few live entries are rewritten when some are freed. Survivors of
            // pages that lost entries come first, in their old order, then entries without a
            // recorded death (rebased keyframes), then the packing walk's by death.
            func order(_ reference: PageReference) -> (Int, UInt64, UInt64, UInt64) {
                if let survivor = packWork.survivors[reference] { return (0, UInt64(survivor), 0, 0) }
                return (1, packWork.deaths[reference] ?? 0, reference.page.rawValue, reference.birth.rawValue)
            }
            encoded.sort { order($0.0) < order($1.0) }
        } else {
            encoded.sort { $0.1.count != $1.1.count ? $0.1.count > $1.1.count : $0.0.page < $1.0.page }
        }
        var pages: [(buffer: [UInt8], entries: [(PageReference, Int)])] = []
        var lastWasSurvivor = false
        for (reference, bytes) in encoded {
            func fits(_ index: Int) -> Bool { pages[index].buffer.count + bytes.count <= capacity }
            let open: Int?
            if byDeath {
                // Next fit; survivors die within the next few commits, so entries that live
                // longer start a page of their own (they would be rewritten when the survivors go).
                let isSurvivor = packWork.survivors[reference] != nil
                open = lastWasSurvivor && !isSurvivor ? nil : pages.indices.last.flatMap { fits($0) ? $0 : nil }
                lastWasSurvivor = isSurvivor
            } else {
                open = pages.indices.first(where: fits)
            }
            let index = open ?? {
                pages.append(([], []))
                return pages.count - 1
            }()
            pages[index].entries.append((reference, PackPage.entriesOffset + pages[index].buffer.count))
            pages[index].buffer += bytes
        }
        for page in pages {
            let number = try takeFreePage()
            let buffer = PageBuffer(pageSize: pageSize)
            buffer.bytes.storeLittleEndian(UInt16(PackPage.entriesOffset + page.buffer.count), at: PackPage.usedEndOffset)
            page.buffer.withUnsafeBytes { source in
                (buffer.bytes.baseAddress! + PackPage.entriesOffset).copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
            setDirty(number, .raw(buffer, kind: .pack, count: page.entries.count))
            for (reference, offset) in page.entries {
                let value = PackIndex.Value.packed(packPage: PageReference(page: number, birth: transaction), offset: offset)
                _ = try packWork.tree.put(packKey(reference), .inline(PackIndex.encode(value, owner: reference.birth)), editor: self)
            }
            let directory = PackIndex.Value.directory(
                birth: transaction, liveEntries: UInt64(page.entries.count), liveBytes: UInt64(page.buffer.count))
            _ = try packWork.tree.put(PackIndex.directoryKey(number), .inline(PackIndex.encode(directory)), editor: self)
            packWork.counters.packPages += 1
            packWork.counters.packedPages += UInt64(page.entries.count)
            packWork.counters.packedBytes += UInt64(page.buffer.count)
        }
    }
}
