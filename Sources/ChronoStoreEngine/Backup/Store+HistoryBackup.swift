// Backups with history: every retained root, with its labels, times, branches and redo
// targets, and every snapshot, copied into a new self-contained store.

extension Store {
    /// Writes a self-contained store at `path` holding every retained root and snapshot, not just
    /// one root. Roots keep their labels, commit times, history and lineage links and redo
    /// targets; the head and the snapshots point at the copies of theirs. Root ids are those of
    /// the new store (each copied root is one commit there), so they differ from the source's.
    ///
    /// Pages shared between roots are copied once. Every retained root is pinned while the copy
    /// runs, so it is consistent while writes continue; the writer is never blocked. Cancellation
    /// and failure leave no file behind. Cost: O(pages of all retained roots).
    /// - Throws: ``StoreError/storeAlreadyExists(path:)``, `CancellationError`.
    @discardableResult
    package func backupWithHistory(to path: String, progress: (BackupProgress) throws -> Void = { _ in }) throws -> BackupReport {
        if Platform.fileExists(path) { throw StoreError.storeAlreadyExists(path: path) }
        let reader = try beginRead()
        defer { reader.close() }
        let source = reader.snapshot
        var entries: [HistoryEntry] = []
        let index = JournaledTree(root: source.state.historyIndex, journal: source.state.journal.historyIndex)
        try index.scan(.all, reverse: false, reader: reader.treeReader) { key, value in
            entries.append(try HistoryEntry.decode(value, page: index.page(of: key)))
            return true
        }
        var pinned: [TransactionID] = []
        defer { for root in pinned { unpin(root) } }
        for entry in entries {
            try pin(entry.root)
            pinned.append(entry.root)
        }
        let snapshots = try SnapshotTree.all(source.state.snapshots, reader: reader.treeReader)
        let estimate = Int(max(1, source.state.pageCount - source.state.freePageCount))
        let temporary = Self.temporaryPath(beside: path)
        do {
            var destinationOptions = StoreOptions(
                pageSize: pageSize, durability: .deferred, checkpointInterval: Int.max, retention: .limitless,
                dirtyPageLimit: options.dirtyPageLimit)
            // The copy frees nothing, so syncing as it goes would only slow it: one sync at the end.
            destinationOptions.checkpointByteLimit = .max
            let destination = try Store.create(at: temporary, options: destinationOptions)
            var copiedPages = 0
            let copies = try withoutActuallyEscaping(progress) { progress in
                // Old roots' pages may be packed, their slots reused meanwhile: pack first.
                try Self.copyRoots(entries, from: reader.historicReader, into: destination) { done in
                    if Task.isCancelled { throw CancellationError() }
                    copiedPages = done
                    if done % 256 == 0 {
                        try progress(BackupProgress(pagesDone: done, pagesTotal: max(done, estimate), pageSize: self.pageSize))
                    }
                }
            }
            try Self.finishHistoryCopy(source, entries: entries, snapshots: snapshots, copies: copies, in: destination)
            let byteCount = try Self.publishBackup(destination, temporary: temporary, at: path) {
                try progress(BackupProgress(pagesDone: copiedPages, pagesTotal: copiedPages, pageSize: pageSize))
            }
            return BackupReport(root: source.head.transaction, pageCount: copiedPages, byteCount: byteCount)
        } catch {
            _ = Platform.removeFile(temporary)
            _ = Platform.removeFile(temporary + ".lock")
            throw error
        }
    }

    /// Commits one root of `destination` per source root, oldest first (lineage parents come
    /// before their children), sharing copied pages. Returns source id → copy id.
    private static func copyRoots(
        _ entries: [HistoryEntry], from source: SnapshotReader, into destination: Store, onPage: @escaping (Int) throws -> Void
    ) throws -> [TransactionID: TransactionID] {
        var copies: [TransactionID: TransactionID] = [:]
        var copier: TreeCopier<SnapshotReader>?
        for entry in entries {
            let transaction = try destination.beginWrite()
            do {
                if copier == nil { copier = TreeCopier(source: source, destination: transaction) }
                copier!.destination = transaction
                copier!.onPage = onPage
                let root = try LoadedRoot(entry.rootPage, reader: source).record
                let catalog = try copier!.copyCatalog(root.catalog)
                // The dead list names pages of the lineage parent, copied with it.
                let dead = try entry.deadPages(reader: source).map { page -> PageReference in
                    guard let copy = copier!.copy(of: page) else {
                        throw StoreError.malformedPage(page: page.page, reason: "a dead list names a page its lineage parent lacks")
                    }
                    return copy
                }
                try transaction.replaceContents(withCatalog: catalog, freshLineage: false)
                transaction.label = root.label
                transaction.history.importedRoot = ImportedRoot(
                    historyParent: copies[entry.historyParent] ?? .none, lineageParent: copies[entry.lineageParent] ?? .none,
                    depth: entry.depth, timeMilliseconds: entry.timeMilliseconds, invalidated: dead,
                    contentSource: copies[root.contentSource] ?? .none)
            } catch {
                transaction.abort()
                throw error
            }
            guard let copy = try transaction.commit() else { throw StoreError.commitDidNotConverge }
            copies[entry.root] = copy
        }
        return copies
    }

    /// Points the copy's head, redo targets and snapshots at the copied roots, takes over the
    /// retention settings, drops the empty root the copy was created with, and syncs.
    private static func finishHistoryCopy(
        _ source: StoreSnapshot, entries: [HistoryEntry], snapshots: [SnapshotInfo],
        copies: [TransactionID: TransactionID], in destination: Store
    ) throws {
        let transaction = try destination.beginWrite()
        transaction.history.headMove = copies[source.head.transaction]
        // The copied roots were packed in commit order, not along the source head's lineage.
        transaction.history.headMoveLeavesLineage = true
        transaction.history.redoTargets = entries.compactMap { entry in
            guard let root = copies[entry.root], let target = copies[entry.redoTarget] else { return nil }
            return (root, target)
        }
        for snapshot in snapshots {
            guard let root = copies[snapshot.root] else { continue }
            var copy = snapshot
            copy.root = root
            transaction.history.snapshotEdits.append((Array(snapshot.name.utf8), copy))
        }
        transaction.history.retention = source.state.retention
        transaction.history.dropsUndoneBranches = source.state.dropsUndoneBranches
        transaction.history.dropRoots = [TransactionID(1)]
        try transaction.commit()
        try destination.synchronize()
    }
}
