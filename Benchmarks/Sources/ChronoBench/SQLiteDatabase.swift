// Opening SQLite through GRDB the way the comparison requires: WAL, a matched cache, a sync mode.

import GRDB

/// How the benchmark opens every SQLite database.
///
/// WAL is switched on with `PRAGMA journal_mode = WAL` in `prepareDatabase`, not with GRDB's
/// `Configuration.journalMode = .wal`: that option sets `synchronous = NORMAL` after
/// `prepareDatabase` has run (so a FULL set there is silently lost), and on every open without a
/// WAL file it commits a throwaway CREATE/DROP TABLE, which would be timed as part of opening.
/// The settings are read back after opening, and a mismatch stops the benchmark.
enum SQLiteDatabase {
    /// Opens (or creates) the database at `path`: WAL journal, a page cache of `cacheByteCount`
    /// bytes (ChronoStore's `cacheByteCount`), and `synchronous` as `mode` says. The default
    /// page size (4,096 bytes) equals ChronoStore's.
    static func open(path: String, cacheByteCount: Int, mode: SyncMode) throws -> DatabaseQueue {
        var configuration = Configuration()
        let cacheKiB = cacheByteCount / 1024
        let synchronous = pragmaValue(mode)
        configuration.prepareDatabase { database in
            // journal_mode=WAL is stored in the file; on an existing WAL database it only reads.
            _ = try String.fetchOne(database, sql: "PRAGMA journal_mode = WAL")
            // A negative cache_size is in KiB.
            try database.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            try database.execute(sql: "PRAGMA synchronous = \(synchronous)")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try check(queue, cacheKiB: cacheKiB, mode: mode)
        return queue
    }

    static func setSyncMode(_ mode: SyncMode, on queue: DatabaseQueue) throws {
        try queue.inDatabase { database in
            try database.execute(sql: "PRAGMA synchronous = \(pragmaValue(mode))")
        }
        try check(queue, cacheKiB: nil, mode: mode)
    }

    /// Reads the settings back: the comparison is meaningless if any of them did not take.
    private static func check(_ queue: DatabaseQueue, cacheKiB: Int?, mode: SyncMode) throws {
        let (journal, synchronous, cache) = try queue.inDatabase { database in
            (
                try String.fetchOne(database, sql: "PRAGMA journal_mode"),
                try Int.fetchOne(database, sql: "PRAGMA synchronous"),
                try Int.fetchOne(database, sql: "PRAGMA cache_size")
            )
        }
        // PRAGMA synchronous reads back 1 for NORMAL and 2 for FULL.
        let expectedSynchronous = mode == .durable ? 2 : 1
        guard journal == "wal", synchronous == expectedSynchronous, cacheKiB.map({ cache == -$0 }) ?? true else {
            throw BenchmarkError.unexpected(
                "SQLite settings did not take: journal_mode \(journal ?? "?"), synchronous \(synchronous ?? -1), "
                    + "cache_size \(cache ?? 0)")
        }
    }

    /// Copies the WAL into the database file and truncates the WAL, so the database file alone
    /// holds the data and its size can be compared.
    static func checkpoint(_ queue: DatabaseQueue) throws {
        try queue.writeWithoutTransaction { database in
            try database.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    private static func pragmaValue(_ mode: SyncMode) -> String {
        mode == .durable ? "FULL" : "NORMAL"
    }
}
