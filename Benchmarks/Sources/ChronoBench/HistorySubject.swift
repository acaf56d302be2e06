// What each engine must do for the history workloads: versioned updates, as-of reads, undo, open.

/// One engine keeping a history of its records. ChronoStore does this natively (every commit is
/// a root); SQLite keeps an undo log in a table (see ``SQLiteHistorySubject``).
protocol HistorySubject: AnyObject {
    var engineName: String { get }
    func setSyncMode(_ mode: SyncMode) throws
    /// Puts `records[indices]` in one transaction (the starting contents; untimed).
    func load(_ records: RecordSet, _ indices: Range<Int>) throws
    /// Commits one transaction per element of `updates`, each putting the listed keys of
    /// `records` to values taken in turn from `values`.
    func commitUpdates(_ updates: [[Int]], keys records: RecordSet, values: RecordSet) throws
    /// Point reads at the head, in one read transaction.
    func readAtHead(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally
    /// Point reads of the version `rootsBack` commits before the head, in one read transaction.
    func readAsOf(rootsBack: Int, _ records: RecordSet, _ indices: [Int]) throws -> ReadTally
    /// Undoes the head commit (one step), committing as the sync mode says.
    func undoOneStep() throws
    /// Closes the store, to time ``openAndRead(_:)`` next.
    func closeStore() throws
    /// Opens the closed store and reads the value of `key`: the cost of getting to the first
    /// answer.
    func openAndRead(_ key: [UInt8]) throws -> ReadTally
    /// Shrinks the file as far as retained history allows (ChronoStore compaction, SQLite VACUUM).
    func compact() throws
    /// Drops all history but the head.
    func clearHistory() throws
    /// Retained versions (roots, or transactions with history rows).
    func retainedVersionCount() throws -> Int
    func fileByteCount() throws -> Int64
    func close() throws
}
