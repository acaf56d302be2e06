// What each engine must do for the core workloads: put, read, scan and delete byte records.

/// One engine under test, holding one open store of `(key, value)` records. Each method is one
/// timed workload body; set-up and checks stay outside it.
protocol KeyValueSubject: AnyObject {
    var engineName: String { get }
    /// Reopens or reconfigures the store so later commits sync as `mode` says (untimed).
    func setSyncMode(_ mode: SyncMode) throws
    /// Puts `records[indices]` in one transaction and commits it.
    func putInOneTransaction(_ records: RecordSet, _ indices: Range<Int>) throws
    /// Puts each record of `records[indices]` in its own committed transaction.
    func putEachInItsOwnTransaction(_ records: RecordSet, _ indices: Range<Int>) throws
    /// Looks up the key of each index, in one read transaction.
    func pointReads(_ records: RecordSet, _ indices: [Int]) throws -> ReadTally
    /// From the key of each start index, reads up to `length` entries in key order, in one read
    /// transaction.
    func rangeScans(_ records: RecordSet, starts: [Int], length: Int) throws -> ReadTally
    /// Deletes the key of each index in one transaction; returns how many existed.
    func deleteInOneTransaction(_ records: RecordSet, _ indices: [Int]) throws -> Int
    /// The bytes the store's data occupies on disk now (see each engine for what is counted).
    func fileByteCount() throws -> Int64
    func close() throws
}

extension KeyValueSubject {
    /// Puts `records[indices]` in transactions of `batchSize` puts each.
    func putInBatches(_ records: RecordSet, _ indices: Range<Int>, batchSize: Int) throws {
        var start = indices.lowerBound
        while start < indices.upperBound {
            let end = min(start + batchSize, indices.upperBound)
            try putInOneTransaction(records, start..<end)
            start = end
        }
    }
}
