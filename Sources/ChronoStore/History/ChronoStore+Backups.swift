// Backups to any destination, restores from one, and offline replace-restore of a whole store file.
public import Foundation
import ChronoStoreEngine

extension ChronoStore {
    /// Backs up one root (the head by default) to `destination` under `name`: a compacted,
    /// self-contained store streamed to the destination in chunks. Writes may continue
    /// meanwhile (it reads one pinned root). Runs on a queue of its own, so neither the caller's
    /// thread nor this store's writers wait for a slow destination. Cost: O(pages in the root).
    /// - Parameters:
    ///   - destination: where the backup goes.
    ///   - name: the name to store it under (a ``BackupDirectory`` refuses "/", "@" and a leading ".").
    ///   - root: which root to back up; the head by default.
    ///   - progress: called now and then from that queue.
    /// - Returns: the destination's entry for the new backup.
    /// - Throws: what the destination throws; ``ChronoStoreError/invalidOptions(_:)`` for a name
    ///   a ``BackupDirectory`` refuses; I/O errors.
    @discardableResult
    public func backup(
        to destination: some BackupDestination, name: String, of root: RootSelection = .head,
        progress: @escaping @Sendable (CopyProgress) -> Void = { _ in }
    ) async throws -> BackupEntry {
        try ensureNoActiveTransaction("backup")
        let adapter = EngineBackupDestination(destination: destination)
        let selector = root.engineValue
        return try await BlockingLane(label: "ChronoStore backup \(name)").run { [engine] in
            let record = try engine.backup(to: adapter, name: name, of: selector) { step in
                progress(CopyProgress(pagesDone: step.pagesDone, pagesTotal: step.pagesTotal))
            }
            return adapter.lastStored ?? BackupEntry(record)
        }
    }

    /// Restores a backup kept in `destination`: reads it to a scratch file, verifies every page,
    /// then commits its contents as the new head. History is kept, so the restore can be undone;
    /// observers receive the differences. Cost: O(pages copied).
    /// - Throws: ``ChronoStoreError/backupFailedVerification(path:problems:)`` (nothing changes),
    ///   what the destination throws.
    @discardableResult
    public func restore(
        _ entry: BackupEntry, from destination: some BackupDestination, label: String? = nil,
        progress: @escaping @Sendable (CopyProgress) -> Void = { _ in }
    ) async throws -> RootID {
        let adapter = EngineBackupDestination(destination: destination)
        return try await historyOperation("restore") { [engine] in
            RootID(
                try engine.restore(from: adapter, entry.engineValue, label: label) { step in
                    progress(CopyProgress(pagesDone: step.pagesDone, pagesTotal: step.pagesTotal))
                })
        }
    }

    /// Disaster recovery, offline: replaces the whole store file at `url` (its history
    /// included) with the backup file at `backupURL`, after verifying every page of the backup.
    ///
    /// Unlike ``restore(fromBackup:label:progress:)``, which commits the backup's contents as a
    /// new, undoable head, this swaps the file: afterwards the store *is* the backup, with the
    /// backup's history only. It refuses while any process (this one included) has the store
    /// open; an open that races it waits and then opens the new file. A missing store is
    /// created from the backup. Runs on a queue of its own. Cost: O(backup size), or O(1) where
    /// the file system clones files.
    /// - Throws: ``ChronoStoreError/storeInUse(path:)``, ``ChronoStoreError/storeNotFound(path:)``
    ///   (no backup), ``ChronoStoreError/backupFailedVerification(path:problems:)`` (nothing changes).
    public static func replaceStore(at url: URL, withBackup backupURL: URL) async throws {
        try await BlockingLane(label: "ChronoStore replace \(url.path)").run {
            try Store.replaceStore(at: url.path, withBackup: backupURL.path)
        }
    }

    /// Replaces the whole store file at `url` with a backup kept in `destination` (see
    /// ``replaceStore(at:withBackup:)``): the backup is first read into a scratch file beside
    /// the store, then verified and swapped in.
    public static func replaceStore(at url: URL, with entry: BackupEntry, from destination: some BackupDestination) async throws {
        let scratch = url.path + ".download-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try await BlockingLane(label: "ChronoStore replace \(url.path)").run {
            guard FileManager.default.createFile(atPath: scratch, contents: nil), let handle = FileHandle(forWritingAtPath: scratch) else {
                throw ChronoStoreError.io(operation: "create", path: scratch, code: 0, detail: "cannot create \(scratch)")
            }
            defer { try? handle.close() }
            try destination.read(entry) { chunk in try handle.write(contentsOf: chunk) }
            try handle.synchronize()
            try Store.replaceStore(at: url.path, withBackup: scratch)
        }
    }
}
