// Dated backups kept in a directory with their own retention, and checking a store's integrity.
public import Foundation
import ChronoStoreEngine

/// A directory of dated backups: files named `NAME@MILLISECONDS.chronobackup`, each a complete
/// store, pruned per name by ``retention`` after every backup.
public struct BackupDirectory: Sendable, Equatable {
    /// How many backups to keep per name.
    public enum Retention: Sendable, Equatable {
        /// Keep every backup.
        case all
        /// Keep the newest `count` backups of each name.
        case last(Int)
        /// Keep backups younger than `days` days (and always the newest).
        case days(Int)
    }

    /// The directory (created when missing).
    public var url: URL
    /// How many backups to keep per name.
    public var retention: Retention

    /// A backup directory at `url` keeping backups per `retention`.
    public init(url: URL, retention: Retention = .all) {
        self.url = url
        self.retention = retention
    }

    var engineValue: DirectoryBackupDestination {
        let engineRetention: BackupRetention
        switch retention {
        case .all: engineRetention = .all
        case .last(let count): engineRetention = .last(count)
        case .days(let days): engineRetention = .days(days)
        }
        return DirectoryBackupDestination(directory: url.path, retention: engineRetention)
    }
}

/// One backup kept in a ``BackupDirectory``.
public struct StoredBackup: Sendable, Equatable {
    /// The name it was stored under.
    public var name: String
    /// When it was stored.
    public var date: Date
    /// Its file.
    public var url: URL
    /// Its size in bytes.
    public var byteCount: UInt64
}

/// What ``ChronoStore/verify(progress:)`` found.
public struct VerificationSummary: Sendable, Equatable {
    /// Pages read and checked.
    public var pagesChecked: Int
    /// Problems found, as messages naming pages; empty for a sound store.
    public var problems: [String]
    /// Whether the store is sound.
    public var isSound: Bool { problems.isEmpty }
}

extension ChronoStore {
    /// Backs up one root (the head by default) into `directory` under `name`, then applies the
    /// directory's retention to that name. Works for in-memory stores too. The backup is
    /// written beside its final name and appears only when complete. Cost: O(pages in the root).
    /// - Throws: ``ChronoStoreError/invalidOptions(_:)`` for a name that is empty or contains
    ///   "/" or "@"; I/O errors.
    @discardableResult
    public func backup(
        to directory: BackupDirectory, name: String, of root: RootSelection = .head,
        progress: (CopyProgress) -> Void = { _ in }
    ) async throws -> StoredBackup {
        do {
            try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        } catch {
            throw ChronoStoreError.io(operation: "mkdir", path: directory.url.path, code: 0, detail: "\(error)")
        }
        let temporary = directory.url.appendingPathComponent(".\(UUID().uuidString).partial-backup")
        defer { try? FileManager.default.removeItem(at: temporary) }
        try await backup(to: temporary, of: root, progress: progress)
        let destination = directory.engineValue
        let record = try engineCall {
            let handle = try FileHandle(forReadingFrom: temporary)
            defer { try? handle.close() }
            return try destination.store(name: name) {
                guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
                return [UInt8](data)
            }
        }
        return StoredBackup(record, in: directory)
    }

    /// The backups in `directory`, oldest first.
    public static func backups(in directory: BackupDirectory) throws -> [StoredBackup] {
        try engineCall { try directory.engineValue.list().map { StoredBackup($0, in: directory) } }
    }

    /// Restores a backup from a directory: verifies it, then commits its contents as the new
    /// head (undoable; observers see the differences). Cost: O(pages copied).
    @discardableResult
    public func restore(_ backup: StoredBackup, label: String? = nil, progress: (CopyProgress) -> Void = { _ in }) async throws -> RootID {
        try await restore(fromBackup: backup.url, label: label ?? "Restore \(backup.name)", progress: progress)
    }

    /// Reads every page of every retained root and checks checksums, identities and the free-space
    /// accounting. Runs on one pinned root without blocking writers. Cost: O(pages in the store).
    /// - Parameter progress: called with (pages checked, pages in the store) now and then.
    public func verify(progress: (Int, Int) -> Void = { _, _ in }) async throws -> VerificationSummary {
        let report = try engineCall { try withoutActuallyEscaping(progress) { try engine.verify(progress: $0) } }
        return VerificationSummary(pagesChecked: report.pagesChecked, problems: report.problems)
    }
}

extension StoredBackup {
    init(_ record: BackupRecord, in directory: BackupDirectory) {
        name = record.name
        date = Date(timeIntervalSince1970: Double(record.timeMilliseconds) / 1000)
        url = directory.url.appendingPathComponent(record.identifier)
        byteCount = record.byteCount
    }
}
