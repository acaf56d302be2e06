// Where backups go, as the typed API sees it: a protocol apps implement for their own storage.
public import Foundation
import ChronoStoreEngine

/// Somewhere to keep named, dated backups: a ``BackupDirectory``, or an app's own storage (a
/// cloud container, a server, a keychain-protected area).
///
/// The store hands a backup over as a stream of chunks and reads it back the same way, so an
/// implementation never needs a whole backup in memory. Methods are called from the store's
/// work, possibly off the main thread; they may block (a network upload) since they never run on
/// the caller's actor.
///
/// ```swift
/// struct Uploads: BackupDestination {
///     func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupEntry { ... }
///     func list() throws -> [BackupEntry] { ... }
///     func delete(_ entry: BackupEntry) throws { ... }
///     func read(_ entry: BackupEntry, into sink: ([UInt8]) throws -> Void) throws { ... }
/// }
/// try await store.backup(to: Uploads(), name: "nightly")
/// ```
public protocol BackupDestination: Sendable {
    /// Stores a backup under `name`, reading chunks from `nextChunk` until it returns nil, and
    /// returns the entry that finds it again. Keep it only once complete: on a throw, store nothing.
    func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupEntry
    /// Every stored backup, oldest first.
    func list() throws -> [BackupEntry]
    /// Deletes a stored backup.
    func delete(_ entry: BackupEntry) throws
    /// Streams a stored backup's bytes, in order, to `sink`.
    func read(_ entry: BackupEntry, into sink: ([UInt8]) throws -> Void) throws
}

/// One backup kept by a ``BackupDestination``.
public struct BackupEntry: Sendable, Equatable, Hashable {
    /// How the destination finds it again (a file name, an object key).
    public var identifier: String
    /// The name it was stored under; several dated backups share a name.
    public var name: String
    /// When it was stored.
    public var date: Date
    /// Its size in bytes.
    public var byteCount: UInt64

    /// An entry with these fields.
    public init(identifier: String, name: String, date: Date, byteCount: UInt64) {
        self.identifier = identifier
        self.name = name
        self.date = date
        self.byteCount = byteCount
    }
}

extension BackupDirectory: BackupDestination {
    /// Writes the chunks to a file `NAME@MILLISECONDS.chronobackup` (complete or absent), then
    /// applies ``retention`` to `name`.
    public func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupEntry {
        try createDirectory()
        return BackupEntry(try engineCall { try engineValue.store(name: name, nextChunk: nextChunk) })
    }

    /// The backups in the directory, oldest first.
    public func list() throws -> [BackupEntry] {
        try createDirectory()
        return try engineCall { try engineValue.list().map(BackupEntry.init) }
    }

    /// Removes a backup's file.
    public func delete(_ entry: BackupEntry) throws { try engineCall { try engineValue.delete(entry.engineValue) } }

    /// Streams a backup's file.
    public func read(_ entry: BackupEntry, into sink: ([UInt8]) throws -> Void) throws {
        try engineCall { try engineValue.read(entry.engineValue, into: sink) }
    }

    func createDirectory() throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ChronoStoreError.io(operation: "mkdir", path: url.path, code: 0, detail: "\(error)")
        }
    }
}

extension BackupEntry {
    init(_ record: BackupRecord) {
        self.init(
            identifier: record.identifier, name: record.name,
            date: Date(timeIntervalSince1970: Double(record.timeMilliseconds) / 1000), byteCount: record.byteCount)
    }

    var engineValue: BackupRecord {
        BackupRecord(
            identifier: identifier, name: name, timeMilliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()),
            byteCount: byteCount)
    }
}

/// An app's destination as the engine's: the engine streams backups through it. The entry the
/// destination returned for the last backup stored is kept as it was (the engine's record holds
/// whole milliseconds only).
///
/// `@unchecked Sendable`: `lock` guards `stored`.
final class EngineBackupDestination<Destination: BackupDestination>: ChronoStoreEngine.BackupDestination, @unchecked Sendable {
    let destination: Destination
    private let lock = Lock()
    private var stored: BackupEntry?

    init(destination: Destination) { self.destination = destination }

    /// The entry of the last backup stored through this adapter.
    var lastStored: BackupEntry? { lock.withLock { stored } }

    func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupRecord {
        let entry = try destination.store(name: name, nextChunk: nextChunk)
        lock.withLock { stored = entry }
        return entry.engineValue
    }

    func list() throws -> [BackupRecord] { try destination.list().map(\.engineValue) }

    func delete(_ record: BackupRecord) throws { try destination.delete(BackupEntry(record)) }

    func read(_ record: BackupRecord, into sink: ([UInt8]) throws -> Void) throws {
        try destination.read(BackupEntry(record), into: sink)
    }
}
