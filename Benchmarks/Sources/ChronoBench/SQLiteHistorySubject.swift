// SQLite (through GRDB) under the history workloads: an undo-log table, pruned with DELETE.

import Foundation
import GRDB

/// The usual way to give a SQLite app history: next to `records`, a table of the values each
/// transaction overwrote.
///
/// ```sql
/// records(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID            -- the head
/// history(k, version, v, PRIMARY KEY (k, version)) WITHOUT ROWID -- v = value before `version`
/// history_by_version ON history(version)                       -- for retention and undo
/// versions(version INTEGER PRIMARY KEY, time INTEGER)           -- one row per transaction
/// head(id = 1, version)                                         -- the version `records` shows
/// ```
///
/// Version 0 is the loaded contents. Transaction `t` saves each key's previous value under
/// `(k, t)` (once per transaction), then writes the new value. Keeping the last `retained`
/// versions deletes the history rows no retained version needs, in the same transaction.
/// Reading as of version `s` takes each key's oldest history row newer than `s`, or the head.
/// Undo applies the head version's saved values and keeps the values it replaced in those rows
/// for a redo.
final class SQLiteHistorySubject: HistorySubject {
    let engineName = "SQLite"
    let path: String
    private let cacheByteCount: Int
    private let retained: Int?
    private var mode: SyncMode
    private var queue: DatabaseQueue?
    private var headVersion = 0

    /// - Parameter secureDelete: runs `PRAGMA secure_delete = ON` (freed content overwritten with zeros).
    init(path: String, cacheByteCount: Int, mode: SyncMode, retainedVersionCount: Int?, secureDelete: Bool = false) throws {
        self.path = path
        self.cacheByteCount = cacheByteCount
        self.mode = mode
        self.retained = retainedVersionCount
        let queue = try SQLiteDatabase.open(path: path, cacheByteCount: cacheByteCount, mode: mode)
        self.queue = queue
        if secureDelete { try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA secure_delete = ON") } }
        try queue.write { database in
            try database.execute(
                sql: """
                    CREATE TABLE records(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID;
                    CREATE TABLE history(k BLOB NOT NULL, version INTEGER NOT NULL, v BLOB,
                                         PRIMARY KEY (k, version)) WITHOUT ROWID;
                    CREATE INDEX history_by_version ON history(version);
                    CREATE TABLE versions(version INTEGER PRIMARY KEY, time INTEGER NOT NULL);
                    CREATE TABLE head(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                    INSERT INTO head(id, version) VALUES (1, 0);
                    INSERT INTO versions(version, time) VALUES (0, 0);
                    """)
        }
    }

    private var openQueue: DatabaseQueue {
        get throws {
            guard let queue else { throw BenchmarkError.unexpected("the SQLite history database is closed") }
            return queue
        }
    }

    func setSyncMode(_ mode: SyncMode) throws {
        self.mode = mode
        try SQLiteDatabase.setSyncMode(mode, on: try openQueue)
    }

    func load(_ records: RecordSet, _ indices: Range<Int>) throws {
        try openQueue.write { database in
            let statement = try database.cachedStatement(sql: "INSERT OR REPLACE INTO records(k, v) VALUES (?, ?)")
            for index in indices {
                statement.setUncheckedArguments([records.keyData(index), records.valueData(index)])
                try statement.execute()
            }
        }
    }

    func commitUpdates(_ updates: [[Int]], keys records: RecordSet, values: RecordSet) throws {
        let queue = try openQueue
        var valueIndex = 0
        for keys in updates {
            let version = headVersion + 1
            try queue.write { database in
                try database.cachedStatement(sql: "INSERT INTO versions(version, time) VALUES (?, ?)")
                    .execute(arguments: [version, Int64(Date().timeIntervalSince1970 * 1000)])
                let select = try database.cachedStatement(sql: "SELECT v FROM records WHERE k = ?")
                let save = try database.cachedStatement(
                    sql: "INSERT OR IGNORE INTO history(k, version, v) VALUES (?, ?, ?)")
                let put = try database.cachedStatement(sql: "INSERT OR REPLACE INTO records(k, v) VALUES (?, ?)")
                for key in keys {
                    let keyData = records.keyData(key)
                    select.setUncheckedArguments([keyData])
                    let previous = try Data.fetchOne(select)
                    save.setUncheckedArguments([keyData, version, previous])
                    try save.execute()
                    put.setUncheckedArguments([keyData, values.valueData(valueIndex % values.count)])
                    try put.execute()
                    valueIndex += 1
                }
                try database.cachedStatement(sql: "UPDATE head SET version = ? WHERE id = 1").execute(arguments: [
                    version
                ])
                try applyRetention(database, head: version)
            }
            headVersion = version
        }
    }

    /// Keeps versions `head - retained + 1 ... head` readable: a version `s` needs the history
    /// rows newer than `s`.
    private func applyRetention(_ database: Database, head: Int) throws {
        guard let retained, head - retained + 1 > 0 else { return }
        let oldest = head - retained + 1
        try database.cachedStatement(sql: "DELETE FROM history WHERE version <= ?").execute(arguments: [oldest])
        try database.cachedStatement(sql: "DELETE FROM versions WHERE version < ?").execute(arguments: [oldest])
    }

    func readAtHead(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try openQueue.read { database in
            let statement = try database.cachedStatement(sql: "SELECT v FROM records WHERE k = ?")
            var tally = ReadTally()
            for index in indices {
                statement.setUncheckedArguments([records.keyData(index)])
                if let value = try Data.fetchOne(statement) { tally.add(value) }
            }
            return tally
        }
    }

    func readAsOf(rootsBack: Int, _ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        let version = headVersion - rootsBack
        return try openQueue.read { database in
            let saved = try database.cachedStatement(
                sql: "SELECT v FROM history WHERE k = ? AND version > ? ORDER BY version LIMIT 1")
            let current = try database.cachedStatement(sql: "SELECT v FROM records WHERE k = ?")
            var tally = ReadTally()
            for index in indices {
                let key = records.keyData(index)
                saved.setUncheckedArguments([key, version])
                let value: Data?
                if let row = try Row.fetchOne(saved) {
                    value = row[0]
                } else {
                    current.setUncheckedArguments([key])
                    value = try Data.fetchOne(current)
                }
                if let value { tally.add(value) }
            }
            return tally
        }
    }

    func undoOneStep() throws {
        let version = headVersion
        guard version > 0 else { throw BenchmarkError.unexpected("SQLite history: nothing to undo") }
        try openQueue.write { database in
            let saved = try Row.fetchAll(
                database.cachedStatement(sql: "SELECT k, v FROM history WHERE version = ?"), arguments: [version])
            let select = try database.cachedStatement(sql: "SELECT v FROM records WHERE k = ?")
            let put = try database.cachedStatement(sql: "INSERT OR REPLACE INTO records(k, v) VALUES (?, ?)")
            let remove = try database.cachedStatement(sql: "DELETE FROM records WHERE k = ?")
            let keep = try database.cachedStatement(sql: "UPDATE history SET v = ? WHERE k = ? AND version = ?")
            for row in saved {
                let key: Data = row[0]
                let previous: Data? = row[1]
                select.setUncheckedArguments([key])
                let replaced = try Data.fetchOne(select)
                if let previous {
                    try put.execute(arguments: [key, previous])
                } else {
                    try remove.execute(arguments: [key])
                }
                try keep.execute(arguments: [replaced, key, version])
            }
            try database.cachedStatement(sql: "UPDATE head SET version = ? WHERE id = 1").execute(arguments: [
                version - 1
            ])
        }
        headVersion = version - 1
    }

    func closeStore() throws {
        try queue?.close()
        queue = nil
    }

    func openAndRead(_ key: [UInt8]) throws -> ReadTally {
        let queue = try SQLiteDatabase.open(path: path, cacheByteCount: cacheByteCount, mode: mode)
        self.queue = queue
        var tally = ReadTally()
        let value = try queue.read { database in
            try Data.fetchOne(database, sql: "SELECT v FROM records WHERE k = ?", arguments: [Data(key)])
        }
        if let value { tally.add(value) }
        return tally
    }

    func compact() throws {
        try openQueue.writeWithoutTransaction { database in try database.execute(sql: "VACUUM") }
    }

    func clearHistory() throws {
        try openQueue.write { database in
            try database.execute(sql: "DELETE FROM history")
            try database.execute(sql: "DELETE FROM versions WHERE version < ?", arguments: [headVersion])
        }
    }

    func retainedVersionCount() throws -> Int {
        try openQueue.read { database in try Int.fetchOne(database, sql: "SELECT COUNT(*) FROM versions") ?? 0 }
    }

    /// The database file after a checkpoint that empties the WAL (the checkpoint is not timed).
    func fileByteCount() throws -> Int64 {
        try SQLiteDatabase.checkpoint(try openQueue)
        return ScratchDirectory.byteCount(of: path)
    }

    func close() throws {
        try closeStore()
    }
}
