// Commit: fold edits into a new root and state, settle free space, write, sync once, publish.

extension WriteTransaction {
    var hasChanges: Bool { !dirty.isEmpty || !invalidated.isEmpty || !collections.isEmpty }

    /// Makes every edit of this transaction durable (in durable mode) and visible, as one new root.
    ///
    /// Steps:
    /// 1. fold the edited collections into the catalog tree;
    /// 2. allocate the root and state pages;
    /// 3. prune roots nothing retains, and add the new root to the history index;
    /// 4. build the root page with its deadlist and introduced list;
    /// 5. settle the free tree;
    /// 6. build the state record;
    /// 7. hand the sealed pages to the store, which writes them, writes a header slot and syncs once.
    ///
    /// - Returns: the new root's id, or nil when the transaction changed nothing.
    /// - Throws: ``StoreError/writesDisabledAfterSyncFailure(underlying:)`` when the sync fails
    ///   (the store then refuses writes until reopened), or an I/O or damage error; on any error
    ///   the store is unchanged.
    @discardableResult
    package func commit() throws -> TransactionID? {
        try checkActive()
        guard hasChanges else {
            abort()
            return nil
        }
        let sealed: (pages: [PageBuffer], snapshot: StoreSnapshot)
        let syncs = store.nextCommitSyncs
        do {
            sealed = try buildCommit(syncs: syncs)
        } catch {
            abort()
            throw error
        }
        markFinished()
        // Publishing releases the writer whether it succeeds or throws.
        try store.publishCommit(self, pages: sealed.pages, snapshot: sealed.snapshot, syncs: syncs)
        return transaction
    }

    private func buildCommit(syncs: Bool) throws -> (pages: [PageBuffer], snapshot: StoreSnapshot) {
        // 1. Fold collection edits into the catalog.
        for name in collections.keys.sorted(by: { KeyOrder.compare($0, $1) < 0 }) {
            let state = collections[name]!
            if state.exists {
                let entry = CollectionEntry(root: state.tree.root, count: state.count)
                _ = try catalogTree.put(name, .inline(entry.encoded()), editor: self)
            } else {
                _ = try catalogTree.remove(name, editor: self)
            }
        }
        // 2. The root and state pages; the previous state page is superseded.
        let rootPage = PageReference(page: try takeFreePage(), birth: transaction)
        let statePage = PageReference(page: try takeFreePage(), birth: transaction)
        releasePage(base.stateReference, owner: .system)
        // 3. Retention, then the history index entry for the new root.
        var history = BTree(root: base.state.historyIndex, owner: .system)
        let (tail, prunedCount) = try pruneRoots(history: &history, limit: store.options.pruneBatchLimit)
        _ = try history.put(HistoryIndex.key(transaction), HistoryIndex.value(rootPage), editor: self)
        // 4. The root page.
        let rootRecord = RootRecord(
            transaction: transaction, parent: base.stateHeadReference, timeMilliseconds: Clock.nowMilliseconds(),
            catalog: catalogTree.root, label: label)
        let rootBuffer = try buildRootPage(rootRecord, on: rootPage.page)
        // 5. Free space.
        try settleFreeTree()
        // 6. The state record.
        let state = StateRecord(
            transaction: transaction, previous: base.stateReference, syncedTransaction: store.syncedTransactionForCommit(base: base.transaction, syncs: syncs),
            head: rootPage, historyIndex: history.root, freeTree: allocator.freeTree.root,
            pageCount: allocator.nextPage, tail: tail,
            retainedRootCount: base.state.retainedRootCount + 1 - UInt64(prunedCount),
            freePageCount: freePageCountAfterCommit)
        let stateBuffer = PageBuffer(pageSize: pageSize)
        state.encode(into: stateBuffer.bytes)
        setDirty(statePage.page, .raw(stateBuffer, kind: .state, count: 0))
        // 7. Seal every page.
        let decodedRoot = try RootRecord.decode(rootBuffer.sealedForDecoding(page: rootPage.page, birth: transaction))
        let snapshot = StoreSnapshot(stateReference: statePage, state: state, head: decodedRoot)
        return (sealAll(), snapshot)
    }

    /// Lays out the root page: fixed fields, label, and each list inline when it fits.
    private func buildRootPage(_ record: RootRecord, on page: PageID) throws -> PageBuffer {
        var record = record
        let labelCount = record.labelBytes.count
        if labelCount > RootRecord.maximumLabelByteCount {
            throw StoreError.labelTooLong(byteCount: labelCount, limit: RootRecord.maximumLabelByteCount)
        }
        let deadlist = invalidated
        let introduced = introducedPages.sorted().map { PageReference(page: $0, birth: transaction) }
        let space = pageSize - record.inlineAreaOffset
        let entry = PageReference.byteCount
        let deadlistInline = deadlist.count * entry <= space
        let introducedInline = introduced.count * entry <= space - (deadlistInline ? deadlist.count * entry : 0)
        let buffer = PageBuffer(pageSize: pageSize)
        var inlineOffset = record.inlineAreaOffset
        record.invalidated = try placeList(deadlist, inline: deadlistInline, in: buffer, at: &inlineOffset)
        record.introduced = try placeList(introduced, inline: introducedInline, in: buffer, at: &inlineOffset)
        record.encode(into: buffer.bytes)
        setDirty(page, .raw(buffer, kind: .root, count: 0))
        return buffer
    }

    private func placeList(
        _ entries: [PageReference], inline: Bool, in owner: PageBuffer, at offset: inout Int
    ) throws -> ListDescriptor {
        if inline {
            PageList.storeInline(entries, into: owner.bytes, at: offset)
            offset += entries.count * PageReference.byteCount
            return ListDescriptor(count: entries.count, firstChunk: .none)
        }
        var pages: [PageID] = []
        for _ in 0..<PageList.chunkCount(for: entries.count, pageSize: pageSize) { pages.append(try takeFreePage()) }
        let (descriptor, chunks) = PageList.makeChunks(entries, on: pages, birth: transaction, pageSize: pageSize)
        for (page, buffer, count) in chunks { setDirty(page, .raw(buffer, kind: .listChunk, count: count)) }
        return descriptor
    }

    /// Encodes and seals every dirty page with this transaction as its birth.
    private func sealAll() -> [PageBuffer] {
        var pages: [PageBuffer] = []
        pages.reserveCapacity(dirty.count)
        for (page, content) in dirty {
            switch content {
            case .leaf(let node):
                let buffer = PageBuffer(pageSize: pageSize)
                NodeLayout.encode(node, into: buffer)
                buffer.seal(kind: .leaf, page: page, birth: transaction, count: node.keys.count)
                pages.append(buffer)
            case .branch(let node):
                let buffer = PageBuffer(pageSize: pageSize)
                NodeLayout.encode(node, into: buffer)
                buffer.seal(kind: .branch, page: page, birth: transaction, count: node.keys.count)
                pages.append(buffer)
            case .raw(let buffer, let kind, let count):
                buffer.seal(kind: kind, page: page, birth: transaction, count: count)
                pages.append(buffer)
            }
        }
        return pages
    }
}

extension StoreSnapshot {
    /// The head root as a reference (the parent of the next commit).
    var stateHeadReference: PageReference { state.head }
}

extension PageBuffer {
    /// Writes the header identity fields so an unsealed page can be decoded.
    func sealedForDecoding(page: PageID, birth: TransactionID) -> PageBuffer {
        bytes.storeLittleEndian(page.rawValue, at: PageHeader.pageIDOffset)
        bytes.storeLittleEndian(birth.rawValue, at: PageHeader.birthOffset)
        return self
    }
}
