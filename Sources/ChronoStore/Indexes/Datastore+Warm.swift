// warm(): build indexes added or changed since records were stored, and rewrite records of
// older versions at the current version, with progress.
import ChronoStoreEngine

/// How far ``Datastore/warm(migrate:progress:)`` has got.
public struct WarmProgress: Sendable, Equatable {
    /// Records processed so far.
    public var recordsDone: Int
    /// Records in the datastore.
    public var recordsTotal: Int

    /// A progress value (for comparisons in tests and previews).
    public init(recordsDone: Int, recordsTotal: Int) {
        self.recordsDone = recordsDone
        self.recordsTotal = recordsTotal
    }
}

/// What ``Datastore/warm(migrate:progress:)`` did.
public struct WarmReport: Sendable, Equatable {
    /// Names of the indexes it built.
    public var builtIndexes: [String]
    /// Names of the indexes it dropped (no longer declared).
    public var droppedIndexes: [String]
    /// How many records it rewrote at the current version.
    public var migratedRecords: Int
}

extension Datastore {
    /// Brings the datastore up to its format: drops indexes no longer declared, builds declared
    /// indexes that are missing or changed kind, and rewrites records stored at other versions
    /// (running ``DatastoreFormat/decode(version:from:)``) at ``DatastoreFormat/currentVersion``.
    ///
    /// Runs as one transaction (or joins the current one): all or nothing. It reads records in
    /// chunks of 256. Cost: O(n log n) when anything needs doing; O(n) reads to find out that
    /// nothing does (skipped entirely when no index is missing and `migrate` is false).
    /// - Parameters:
    ///   - migrate: also rewrite records of other versions (default true).
    ///   - progress: called after each chunk.
    /// - Throws: ``ChronoStoreError/uniqueIndexViolation(datastore:index:existing:conflicting:)``
    ///   when existing records break a new unique index (nothing changes).
    @discardableResult
    public func warm(migrate: Bool = true, progress: (WarmProgress) -> Void = { _ in }) async throws -> WarmReport {
        try Format.validateName()
        return try await store.performWrite(label: "Warm \(Format.name)") { writer, log in
            var report = WarmReport(builtIndexes: [], droppedIndexes: [], migratedRecords: 0)
            var metadata = try Format.metadata(in: writer)
            let declared = Format.indexes
            try Format.validateIndexNames(declared)
            try Format.recordIdentifierShape(in: writer, log: &log)
            for (name, kind) in metadata.indexes where !declared.contains(where: { $0.name == name && $0.kind == kind }) {
                try writer.dropCollection(Format.indexCollectionName(name))
                metadata.indexes.removeValue(forKey: name)
                report.droppedIndexes.append(name)
            }
            let missing = declared.filter { metadata.indexes[$0.name] != $0.kind }
            for index in missing { try writer.dropCollection(index.collectionName) }
            if !missing.isEmpty || migrate {
                report.migratedRecords = try rebuild(missing, migrate: migrate, writer: writer, log: &log, progress: progress)
            }
            for index in missing {
                metadata.indexes[index.name] = index.kind
                report.builtIndexes.append(index.name)
            }
            if !missing.isEmpty || !report.droppedIndexes.isEmpty { try Format.writeMetadata(metadata, in: writer) }
            log.preparedIndexes[Format.name] = metadata
            return report
        }
    }

    /// Walks every record in key-ordered chunks, adding entries for `indexes` and rewriting old
    /// versions. Returns how many records were rewritten.
    private func rebuild(
        _ indexes: [AnyDatastoreIndex<Format>], migrate: Bool, writer: WriteTransaction, log: inout ChangeLog,
        progress: (WarmProgress) -> Void
    ) throws -> Int {
        let total = try writer.count(in: Format.collectionName)
        var done = 0
        var migrated = 0
        var lower: KeyBound? = nil
        while true {
            var chunk: [([UInt8], [UInt8])] = []
            try writer.scan(Format.collectionName, range: KeyRange(lower: lower), reverse: false) { key, value in
                chunk.append((key, value))
                return chunk.count < 256
            }
            for (key, record) in chunk {
                let instance = try Format.decodeRecord(record, key: key)
                try Format.updateIndexes(indexes, key: key, old: nil, new: instance, in: writer)
                if migrate, try Format.needsMigration(record) {
                    let rewritten = try Format.encodeRecord(instance)
                    try writer.put(key, rewritten, in: Format.collectionName)
                    log.record(collection: Format.collectionName, key: key, old: record, new: rewritten)
                    migrated += 1
                }
            }
            done += chunk.count
            progress(WarmProgress(recordsDone: done, recordsTotal: total))
            guard chunk.count == 256, let last = chunk.last else { return migrated }
            lower = KeyBound(last.0, inclusive: false)
        }
    }
}
