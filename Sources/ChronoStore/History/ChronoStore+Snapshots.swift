// Snapshots (named pinned roots) and backups at the typed level.
public import Foundation
import ChronoStoreEngine

/// How far a backup or restore has got. `total` is an upper bound until the copy ends.
public struct CopyProgress: Sendable, Equatable {
    /// Pages copied so far.
    public var pagesDone: Int
    /// Pages to copy (an estimate until the end).
    public var pagesTotal: Int
    /// The fraction done, from 0 to 1.
    public var fractionCompleted: Double { pagesTotal == 0 ? 1 : min(1, Double(pagesDone) / Double(pagesTotal)) }
}

/// What a finished backup holds.
public struct BackupSummary: Sendable, Equatable {
    /// The root the backup holds.
    public var root: RootID
    /// Pages written.
    public var pageCount: Int
    /// Size of the backup file.
    public var byteCount: UInt64
}

extension ChronoStore {
    /// Pins the head under `name`: it survives every retention policy until deleted.
    /// O(log snapshots).
    /// - Throws: ``ChronoStoreError/snapshotExists(_:)``, ``ChronoStoreError/invalidSnapshotName(_:)``.
    @discardableResult
    public func createSnapshot(named name: String) async throws -> NamedSnapshot {
        try await historyOperation("createSnapshot") { [engine] in NamedSnapshot(try engine.createSnapshot(named: name)) }
    }

    /// The snapshots, sorted by name.
    public func snapshots() async throws -> [NamedSnapshot] {
        try engineCall { try engine.snapshots().map(NamedSnapshot.init) }
    }

    /// Deletes a snapshot; its root becomes subject to retention again.
    /// - Throws: ``ChronoStoreError/snapshotNotFound(_:)``.
    public func deleteSnapshot(named name: String) async throws {
        try await historyOperation("deleteSnapshot") { [engine] in try engine.deleteSnapshot(named: name) }
    }

    /// Makes a snapshot's contents the head, as a new undoable commit. O(1).
    /// - Returns: the new head.
    @discardableResult
    public func checkoutSnapshot(named name: String, label: String? = nil) async throws -> RootID {
        try await historyOperation("checkoutSnapshot") { [engine] in RootID(try engine.checkoutSnapshot(named: name, label: label)) }
    }

    /// Writes a self-contained, compacted store file at `url` holding one root (the head by
    /// default). It reads one pinned root, so writes may continue meanwhile. The file appears
    /// only when complete; on failure or cancellation nothing is left. Cost: O(pages live in the
    /// root).
    /// - Throws: ``ChronoStoreError/storeAlreadyExists(path:)``, `CancellationError`.
    @discardableResult
    public func backup(
        to url: URL, of root: RootSelection = .head, progress: (CopyProgress) -> Void = { _ in }
    ) async throws -> BackupSummary {
        try ensureNoActiveTransaction("backup")
        let report = try engineCall {
            try engine.backup(to: url.path, of: root.engineValue) { step in
                progress(CopyProgress(pagesDone: step.pagesDone, pagesTotal: step.pagesTotal))
            }
        }
        return BackupSummary(root: RootID(report.root), pageCount: report.pageCount, byteCount: report.byteCount)
    }

    /// Verifies the backup at `url`, then commits its contents as the new head. History is kept,
    /// so the restore can be undone; observers receive the differences. Cost: O(pages copied).
    /// - Throws: ``ChronoStoreError/backupFailedVerification(path:problems:)`` (nothing changes).
    @discardableResult
    public func restore(
        fromBackup url: URL, label: String? = nil, progress: (CopyProgress) -> Void = { _ in }
    ) async throws -> RootID {
        // Runs on the caller's thread, so `progress` is called where the caller expects it.
        try ensureNoActiveTransaction("restore")
        await writers.acquire()
        defer { writers.release() }
        let head = try engineCall {
            RootID(
                try engine.restore(fromBackup: url.path, label: label) { step in
                    progress(CopyProgress(pagesDone: step.pagesDone, pagesTotal: step.pagesTotal))
                })
        }
        hub.catchUp()
        return head
    }
}
