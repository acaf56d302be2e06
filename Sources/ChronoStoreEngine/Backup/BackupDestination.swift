// Where backups go: a protocol apps can implement for their own storage, and a directory.

/// One stored backup.
package struct BackupRecord: Equatable, Sendable {
    /// How the destination finds it again (for a directory: the file name).
    package var identifier: String
    /// The name it was stored under (several dated backups share a name).
    package var name: String
    /// When it was stored, in milliseconds since 1970.
    package var timeMilliseconds: Int64
    package var byteCount: UInt64

    package init(identifier: String, name: String, timeMilliseconds: Int64, byteCount: UInt64) {
        self.identifier = identifier
        self.name = name
        self.timeMilliseconds = timeMilliseconds
        self.byteCount = byteCount
    }
}

/// Somewhere to keep backups: a directory, or an app's own cloud storage.
///
/// The store hands a backup over as a stream of chunks, so a destination never needs the whole
/// file in memory.
package protocol BackupDestination: Sendable {
    /// Stores a backup under `name`, reading chunks from `nextChunk` until it returns nil.
    func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupRecord
    /// Every stored backup, oldest first.
    func list() throws -> [BackupRecord]
    func delete(_ record: BackupRecord) throws
    /// Streams a stored backup's bytes, in order, to `sink`.
    func read(_ record: BackupRecord, into sink: ([UInt8]) throws -> Void) throws
}

/// How many backups a directory keeps per name.
package enum BackupRetention: Equatable, Sendable {
    case all
    case last(Int)
    case days(Int)
}

/// Keeps named, dated backups as files `NAME@MILLISECONDS.chronobackup` in a directory, pruning
/// each name's older backups by its retention after every store.
package struct DirectoryBackupDestination: BackupDestination {
    package let directory: String
    package let retention: BackupRetention
    static let fileExtension = ".chronobackup"

    package init(directory: String, retention: BackupRetention = .all) {
        self.directory = directory
        self.retention = retention
    }

    private func path(_ identifier: String) -> String { directory + "/" + identifier }

    package func store(name: String, nextChunk: () throws -> [UInt8]?) throws -> BackupRecord {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), !name.contains("@") else {
            throw StoreError.invalidBackupName(name)
        }
        // Two backups of a name in one millisecond get distinct times.
        var time = Clock.nowMilliseconds()
        while Platform.fileExists(path("\(name)@\(time)\(Self.fileExtension)")) { time += 1 }
        let identifier = "\(name)@\(time)\(Self.fileExtension)"
        let temporary = path("." + identifier + ".partial")
        var byteCount: UInt64 = 0
        do {
            let file = try PosixFile(path: temporary, create: true)
            while let chunk = try nextChunk() {
                try chunk.withUnsafeBytes { try file.write($0, at: byteCount) }
                byteCount += UInt64(chunk.count)
            }
            try file.synchronize()
            guard Platform.rename(temporary, path(identifier)) == 0 else {
                throw IOError(operation: "rename", path: path(identifier), code: Platform.lastError)
            }
            try PosixFile.synchronizeDirectory(containing: path(identifier))
        } catch {
            _ = Platform.removeFile(temporary)
            if let error = error as? IOError { throw StoreError.io(error) }
            throw error
        }
        try applyRetention(to: name, now: time)
        return BackupRecord(identifier: identifier, name: name, timeMilliseconds: time, byteCount: byteCount)
    }

    package func list() throws -> [BackupRecord] {
        guard let names = Platform.directoryEntries(directory) else {
            throw StoreError.io(IOError(operation: "opendir", path: directory, code: Platform.lastError))
        }
        return names.compactMap { identifier -> BackupRecord? in
            guard identifier.hasSuffix(Self.fileExtension), !identifier.hasPrefix("."),
                let at = identifier.lastIndex(of: "@"),
                let time = Int64(identifier[identifier.index(after: at)...].dropLast(Self.fileExtension.count))
            else { return nil }
            let size = (try? PosixFile(path: path(identifier), create: false, readOnly: true).byteCount()) ?? 0
            return BackupRecord(identifier: identifier, name: String(identifier[..<at]), timeMilliseconds: time, byteCount: size)
        }.sorted { ($0.timeMilliseconds, $0.identifier) < ($1.timeMilliseconds, $1.identifier) }
    }

    package func delete(_ record: BackupRecord) throws {
        guard Platform.removeFile(path(record.identifier)) == 0 else {
            throw StoreError.io(IOError(operation: "unlink", path: path(record.identifier), code: Platform.lastError))
        }
    }

    package func read(_ record: BackupRecord, into sink: ([UInt8]) throws -> Void) throws {
        do {
            let file = try PosixFile(path: path(record.identifier), create: false, readOnly: true)
            var offset: UInt64 = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
                if count == 0 { break }
                try sink(Array(chunk[0..<count]))
                offset += UInt64(count)
            }
        } catch let error as IOError {
            throw StoreError.io(error)
        }
    }

    private func applyRetention(to name: String, now: Int64) throws {
        let backups = try list().filter { $0.name == name }
        let expired: [BackupRecord]
        switch retention {
        case .all: expired = []
        case .last(let count): expired = Array(backups.dropLast(max(count, 1)))
        case .days(let days): expired = backups.dropLast().filter { $0.timeMilliseconds < now - Int64(days) * 86_400_000 }
        }
        for record in expired { try delete(record) }
    }
}

extension Store {
    /// A scratch file path beside the store, or in the temporary directory for a store that
    /// lives in memory.
    func scratchPath(_ suffix: String) -> String {
        let beside = coordination == nil ? Platform.temporaryDirectory + "/chrono-scratch" : path
        return Self.temporaryPath(beside: beside) + suffix
    }

    /// Backs up one root (see ``backup(to:of:progress:)``) into `destination` under `name`.
    @discardableResult
    package func backup(
        to destination: some BackupDestination, name: String, of selector: RootSelector = .head,
        progress: (BackupProgress) throws -> Void = { _ in }
    ) throws -> BackupRecord {
        let temporary = scratchPath(".backup")
        defer { _ = Platform.removeFile(temporary) }
        try backup(to: temporary, of: selector, progress: progress)
        let file = try PosixFile(path: temporary, create: false, readOnly: true)
        var offset: UInt64 = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        return try destination.store(name: name) {
            let count = try chunk.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
            if count == 0 { return nil }
            offset += UInt64(count)
            return Array(chunk[0..<count])
        }
    }

    /// Restores a backup kept in `destination` as a new, undoable commit (see ``restore(fromBackup:label:progress:)``).
    @discardableResult
    package func restore(
        from destination: some BackupDestination, _ record: BackupRecord, label: String? = nil,
        progress: (BackupProgress) throws -> Void = { _ in }
    ) throws -> TransactionID {
        let temporary = scratchPath(".restore")
        defer { _ = Platform.removeFile(temporary); _ = Platform.removeFile(temporary + ".lock") }
        let file = try PosixFile(path: temporary, create: true)
        var offset: UInt64 = 0
        try destination.read(record) { chunk in
            try chunk.withUnsafeBytes { try file.write($0, at: offset) }
            offset += UInt64(chunk.count)
        }
        return try restore(fromBackup: temporary, label: label ?? "Restore \(record.name)", progress: progress)
    }
}
