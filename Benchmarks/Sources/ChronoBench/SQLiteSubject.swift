// SQLite (through GRDB) under the core workloads: one WITHOUT ROWID table of byte records.

import Foundation
import GRDB

/// A SQLite database holding `records(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`. Every statement
/// is prepared once and reused from GRDB's statement cache; puts are `INSERT OR REPLACE`, the
/// same upsert ChronoStore's `put` is.
final class SQLiteSubject: KeyValueSubject {
    let engineName = "SQLite"
    let path: String
    private var queue: DatabaseQueue

    init(path: String, cacheByteCount: Int, mode: SyncMode) throws {
        self.path = path
        queue = try SQLiteDatabase.open(path: path, cacheByteCount: cacheByteCount, mode: mode)
        try queue.write { database in
            try database.execute(sql: "CREATE TABLE records(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        }
    }

    func setSyncMode(_ mode: SyncMode) throws {
        try SQLiteDatabase.setSyncMode(mode, on: queue)
    }

    func putInOneTransaction(_ records: RecordSet, _ indices: Range<Int>) throws {
        try queue.write { database in
            let statement = try database.cachedStatement(sql: "INSERT OR REPLACE INTO records(k, v) VALUES (?, ?)")
            for index in indices {
                statement.setUncheckedArguments([records.keyData(index), records.valueData(index)])
                try statement.execute()
            }
        }
    }

    func putEachInItsOwnTransaction(_ records: RecordSet, _ indices: Range<Int>) throws {
        for index in indices {
            try putInOneTransaction(records, index..<index + 1)
        }
    }

    func pointReads(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally {
        try queue.read { database in
            let statement = try database.cachedStatement(sql: "SELECT v FROM records WHERE k = ?")
            var tally = ReadTally()
            for index in indices {
                statement.setUncheckedArguments([records.keyData(index)])
                if let value = try Data.fetchOne(statement) { tally.add(value) }
            }
            return tally
        }
    }

    func rangeScans(_ records: RecordSet, starts: [Int], length: Int) throws -> ReadTally {
        try queue.read { database in
            let statement = try database.cachedStatement(
                sql: "SELECT k, v FROM records WHERE k >= ? ORDER BY k LIMIT ?")
            var tally = ReadTally()
            for start in starts {
                statement.setUncheckedArguments([records.keyData(start), length])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() {
                    let _: Data = row[0]
                    let value: Data = row[1]
                    tally.add(value)
                }
            }
            return tally
        }
    }

    func deleteInOneTransaction(_ records: RecordSet, _ indices: [Int]) throws -> Int {
        try queue.write { database in
            let statement = try database.cachedStatement(sql: "DELETE FROM records WHERE k = ?")
            var deleted = 0
            for index in indices {
                statement.setUncheckedArguments([records.keyData(index)])
                try statement.execute()
                deleted += database.changesCount
            }
            return deleted
        }
    }

    /// The database file after a checkpoint that empties the WAL (the checkpoint is not timed).
    func fileByteCount() throws -> Int64 {
        try SQLiteDatabase.checkpoint(queue)
        return ScratchDirectory.byteCount(of: path)
    }

    /// Runs VACUUM, which rewrites the database without free pages.
    func vacuum() throws {
        try queue.writeWithoutTransaction { database in try database.execute(sql: "VACUUM") }
    }

    func close() throws {
        try queue.close()
    }
}
