// Backups: a self-contained, compacted store file holding the pages live in one root; restoring
// one as a new, undoable commit; and replacing a whole store offline.

/// How far a backup or restore has got. `pagesTotal` is an upper bound until the copy ends.
package struct BackupProgress: Equatable, Sendable {
    package var pagesDone: Int
    package var pagesTotal: Int
    package var bytesDone: Int64 { Int64(pagesDone) * Int64(pageSize) }
    package var bytesTotal: Int64 { Int64(pagesTotal) * Int64(pageSize) }
    let pageSize: Int
}

/// What a finished backup holds.
package struct BackupReport: Equatable, Sendable {
    /// The source root the backup holds.
    package var root: TransactionID
    package var pageCount: Int
    package var byteCount: UInt64
}

extension Store {
    /// Writes a self-contained store at `path` holding only the pages live in one root (the head
    /// by default, or a snapshot or any retained root). The backup opens, verifies and reads
    /// without this store.
    ///
    /// It reads one pinned root, so it is consistent while writes continue and never blocks the
    /// writer. It writes to a temporary name, syncs, renames, then syncs the directory; when
    /// cancelled (Swift task cancellation, or `progress` throwing) or failing, no file is left.
    /// Cost: O(pages copied).
    /// - Throws: ``StoreError/storeAlreadyExists(path:)`` if `path` exists, `CancellationError`.
    @discardableResult
    package func backup(
        to path: String, of selector: RootSelector = .head, progress: (BackupProgress) throws -> Void = { _ in }
    ) throws -> BackupReport {
        if Platform.fileExists(path) { throw StoreError.storeAlreadyExists(path: path) }
        let reader = try beginRead(at: selector)
        defer { reader.close() }
        let state = reader.snapshot.state
        let estimate = Int(max(1, state.pageCount - state.freePageCount))
        let temporary = Self.temporaryPath(beside: path)
        do {
            let destination = try Store.create(
                at: temporary,
                options: StoreOptions(
                    pageSize: pageSize, durability: .durable, retention: state.retention,
                    dropsUndoneBranches: state.dropsUndoneBranches, dirtyPageLimit: options.dirtyPageLimit))
            var copiedPages = 0
            try withoutActuallyEscaping(progress) { progress in
                _ = try destination.write(label: "Backup of root \(reader.root.transaction.rawValue)") { transaction in
                    let copier = TreeCopier(source: reader.treeReader, destination: transaction)
                    copier.onPage = { done in
                        if Task.isCancelled { throw CancellationError() }
                        copiedPages = done
                        if done % 256 == 0 {
                            try progress(BackupProgress(pagesDone: done, pagesTotal: max(done, estimate), pageSize: self.pageSize))
                        }
                    }
                    try transaction.replaceContents(withCatalog: try copier.copyCatalog(reader.root.catalog), freshLineage: false)
                }
            }
            // The backup holds one root: drop the empty root it was created with, and the
            // pages that freed.
            try destination.clearHistory()
            let byteCount = try Self.publishBackup(destination, temporary: temporary, at: path) {
                try progress(BackupProgress(pagesDone: copiedPages, pagesTotal: copiedPages, pageSize: pageSize))
            }
            return BackupReport(root: reader.root.transaction, pageCount: copiedPages, byteCount: byteCount)
        } catch {
            _ = Platform.removeFile(temporary)
            _ = Platform.removeFile(temporary + ".lock")
            throw error
        }
    }

    /// Verifies the backup at `path`, then commits its contents as the new head. Local history is
    /// kept, so the restore can be undone. The restored root shares no pages with older roots.
    /// Cost: O(pages copied in).
    /// - Throws: ``StoreError/backupFailedVerification(path:problems:)`` (nothing changes), or
    ///   any error opening the backup.
    /// - Returns: the new head.
    @discardableResult
    package func restore(
        fromBackup path: String, label: String? = nil, progress: (BackupProgress) throws -> Void = { _ in }
    ) throws -> TransactionID {
        try Self.withVerifiedBackup(at: path) { backup in
            guard backup.pageSize == pageSize else {
                throw StoreError.pageSizeMismatch(stored: pageSize, requested: backup.pageSize)
            }
            let reader = try backup.beginRead()
            defer { reader.close() }
            let estimate = Int(max(1, reader.snapshot.state.pageCount - reader.snapshot.state.freePageCount))
            let transaction = try beginWrite()
            transaction.label = label ?? "Restore"
            do {
                try withoutActuallyEscaping(progress) { progress in
                    let copier = TreeCopier(source: reader.treeReader, destination: transaction)
                    copier.onPage = { done in
                        if Task.isCancelled { throw CancellationError() }
                        if done % 256 == 0 {
                            try progress(BackupProgress(pagesDone: done, pagesTotal: max(done, estimate), pageSize: self.pageSize))
                        }
                    }
                    try transaction.replaceContents(withCatalog: try copier.copyCatalog(reader.root.catalog), freshLineage: true)
                }
            } catch {
                transaction.abort()
                throw error
            }
            let head = try transaction.commit() ?? transaction.base.head.transaction
            try progress(BackupProgress(pagesDone: estimate, pagesTotal: estimate, pageSize: pageSize))
            return head
        }
    }

    /// Disaster recovery: replaces the whole store at `storePath` (history included) with the
    /// backup at `backupPath`, after verifying the backup. Refuses while any process (or another
    /// open handle in this one) has the store open: it holds the store's open byte exclusively
    /// until the new file is in place, so an opener that raced it waits, sees that the path names
    /// another file, and opens the new one. Uses block cloning where the file system offers it.
    /// - Throws: ``StoreError/backupFailedVerification(path:problems:)``, ``StoreError/storeInUse(path:)``.
    package static func replaceStore(at storePath: String, withBackup backupPath: String) throws {
        try withVerifiedBackup(at: backupPath) { _ in }
        let target = Platform.resolvedPath(storePath) ?? storePath
        var current: PosixFile?
        if Platform.fileExists(target) {
            do {
                let file = try PosixFile(path: target, create: false)
                guard try FileLocks(file: file).tryMarkReplacing() else { throw StoreError.storeInUse(path: storePath) }
                current = file
            } catch let error as IOError { throw StoreError.io(error) }
        }
        // Closing the old file drops the replace mark, after the new file is in place.
        defer { current = nil }
        let temporary = temporaryPath(beside: target)
        do {
            try copyFile(backupPath, temporary)
            guard Platform.rename(temporary, target) == 0 else {
                throw StoreError.io(IOError(operation: "rename", path: storePath, code: Platform.lastError))
            }
            try PosixFile.synchronizeDirectory(containing: target)
        } catch let error as IOError {
            _ = Platform.removeFile(temporary)
            throw StoreError.io(error)
        } catch {
            _ = Platform.removeFile(temporary)
            throw error
        }
        _ = current
    }

    /// Opens a backup, verifies every page, and runs `body` with it; leaves no lock file behind.
    /// The backup is opened read-only and without a lock file: a backup is a finished, closed
    /// store that nothing writes. Whatever recovery writes (for a plain copy of a store that was
    /// not closed cleanly) stays in memory (``OverlayFile``).
    static func withVerifiedBackup<Result>(at path: String, _ body: (Store) throws -> Result) throws -> Result {
        guard Platform.fileExists(path) else { throw StoreError.storeNotFound(path: path) }
        let file: PosixFile
        do { file = try PosixFile(path: path, create: false, readOnly: true) } catch let error as IOError {
            throw StoreError.io(error)
        }
        // Recovery may need to write (a copy of a store that was not closed cleanly): those
        // writes stay in memory, so the backup file is never changed.
        let overlay: OverlayFile
        do { overlay = try OverlayFile(over: file) } catch let error as IOError { throw StoreError.io(error) }
        let backup = try Store.open(file: overlay)
        let report = try backup.verify()
        guard report.isSound else { throw StoreError.backupFailedVerification(path: path, problems: report.problems) }
        return try body(backup)
    }

    /// Copies a file: a block clone where possible, else a plain copy; synced either way.
    static func copyFile(_ source: String, _ destination: String) throws {
        if !Platform.cloneFile(source, destination) {
            let input = try PosixFile(path: source, create: false, readOnly: true)
            let output = try PosixFile(path: destination, create: true)
            let size = try input.byteCount()
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { chunk.deallocate() }
            var offset: UInt64 = 0
            while offset < size {
                let count = try input.read(into: chunk, at: offset)
                if count == 0 { break }
                try output.write(UnsafeRawBufferPointer(rebasing: chunk[0..<count]), at: offset)
                offset += UInt64(count)
            }
        }
        try PosixFile(path: destination, create: false).synchronize()
    }

    /// Finishes a backup written at `temporary`: cuts its free tail, closes it, reports the end
    /// (the last chance to cancel), then renames it to `path` and syncs the directory, so `path`
    /// holds a complete backup or nothing. Returns its size in bytes.
    static func publishBackup(
        _ backup: Store, temporary: String, at path: String, finalProgress: () throws -> Void
    ) throws -> UInt64 {
        try backup.truncateFreeTail()
        try backup.close()
        _ = Platform.removeFile(temporary + ".lock")
        try finalProgress()
        if Task.isCancelled { throw CancellationError() }
        guard Platform.rename(temporary, path) == 0 else {
            throw StoreError.io(IOError(operation: "rename", path: path, code: Platform.lastError))
        }
        do { try PosixFile.synchronizeDirectory(containing: path) } catch let error as IOError { throw StoreError.io(error) }
        return (try? PosixFile(path: path, create: false, readOnly: true).byteCount()) ?? 0
    }

    /// A fresh temporary name beside `path`. Partial files an earlier, interrupted backup to
    /// `path` left behind are removed first (see ``removeAbandonedPartials(beside:)``).
    static func temporaryPath(beside path: String) -> String {
        removeAbandonedPartials(beside: path)
        var generator = SystemRandomNumberGenerator()
        return path + ".partial-\(UInt32.random(in: 0...UInt32.max, using: &generator))"
    }

    /// Removes `path.partial-*` stores (and their lock files) that no handle has open: a backup
    /// killed part way leaves one behind. A partial whose lock file is missing (a store still
    /// being created), or that a handle in any process (this one included) still has open (its
    /// open mark on the file), is left alone.
    static func removeAbandonedPartials(beside path: String) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let prefix = String(path[(slash.map { path.index(after: $0) } ?? path.startIndex)...]) + ".partial-"
        for name in Platform.directoryEntries(directory.isEmpty ? "/" : directory) ?? []
        where name.hasPrefix(prefix) && !name.hasSuffix(".lock") {
            let partial = (directory.isEmpty ? "" : directory) + "/" + name
            guard Platform.fileExists(partial + ".lock"), let file = try? PosixFile(path: partial, create: false),
                let inUse = try? FileLocks(file: file).isOpenElsewhere(), !inUse
            else { continue }
            _ = Platform.removeFile(partial)
            _ = Platform.removeFile(partial + ".lock")
        }
    }
}
