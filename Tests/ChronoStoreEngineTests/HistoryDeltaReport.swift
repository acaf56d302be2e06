// The packed-history measurement table: what each commit keeps today, and what it would keep as
// deltas, pack entries, pack index entries and compact root records.
@testable import ChronoStoreEngine

/// Turns survey totals into per-commit figures and the estimate for format version 2.
struct HistoryDeltaReport {
    /// Assumptions of the estimate (Docs/RootChain.md, "Packed history").
    /// A pack index leaf entry: slot and entry header (8); key: page number and birth, each a
    /// length byte and its big-endian bytes without leading zeros (3 + 1 each at this scale);
    /// value: pack page number (varint, 3) and offset (2).
    static let packIndexEntryByteCount = 8 + 8 + 5
    /// Fill of a B+tree whose keys arrive in random order.
    static let randomInsertFill = 0.69
    /// A version 2 history entry's fixed fields, varint coded (parents, redo target, depth,
    /// time, content source, catalog, label length, list counts, flags), rounded up.
    static let compactEntryFixedByteCount = 32
    /// SQLite's file in the benchmark's full history run, limitless (Docs/Performance.md).
    static let sqliteFullBytes = 261.3 * 1_048_576
    static let fullTransactions = 100_000.0
    static let fullRecords = 100_000.0
    static let window = 16

    struct Column {
        let name: String
        let totals: HistoryDeltaTotals
        /// Bytes per retained root of the history, time and lineage index trees today.
        let historyIndexBytesPerRoot: Double
        let timeAndLineageBytesPerRoot: Double
        /// Fill of today's history index leaves (112-byte entries).
        let historyIndexFill: Double
        /// Pages of the head's trees (catalog and collections).
        let livePages: Int
        let pageSize: Int

        init(name: String, totals: HistoryDeltaTotals, store: Store, keyCount: Int) throws {
            self.name = name
            self.totals = totals
            pageSize = store.pageSize
            let reader = try store.beginRead()
            defer { reader.close() }
            let state = reader.snapshot.state
            let roots = Double(state.retainedRootCount)
            let historyPages = try Self.pageCount(state.historyIndex, reader.treeReader)
            let timeAndLineage = try Self.pageCount(state.timeIndex, reader.treeReader)
                + Self.pageCount(state.lineageIndex, reader.treeReader)
            historyIndexBytesPerRoot = Double(historyPages * pageSize) / roots
            timeAndLineageBytesPerRoot = Double(timeAndLineage * pageSize) / roots
            historyIndexFill = roots * Double(8 + 8 + HistoryEntry.byteCount) / Double(historyPages * pageSize)
            var live = try Self.pageCount(reader.snapshot.head.catalog, reader.treeReader)
            try reader.catalogTree.scan(.all, reverse: false, reader: reader.treeReader) { _, value in
                live += try Self.pageCount(CollectionEntry.decode(value, page: .none).root, reader.treeReader)
                return true
            }
            livePages = live
        }

        static func pageCount(_ root: PageReference, _ reader: SnapshotReader) throws -> Int {
            guard !root.isNone else { return 0 }
            guard case .branchPage(let view) = try reader.node(root) else { return 1 }
            var count = 1
            for index in 0...view.keyCount { count += try pageCount(view.child(at: index), reader) }
            return count
        }

        var commits: Double { Double(totals.commits) }
        var pagesPerCommit: Double { Double(totals.replacedPages) / commits }
        var perPage: Double { Double(totals.replacedPages) }

        /// Per replaced page: delta, entry header, pack index share, and the keyframe share:
        /// for leaves (and other pages) a keyframe every `k` versions; for branches a keyframe
        /// once the chain's deltas add up to a keyframe's size, which costs about one more delta
        /// per version.
        func packedBytesPerCommit(leafKeyframeEvery k: Int) -> Double {
            let index = Double(HistoryDeltaReport.packIndexEntryByteCount) / HistoryDeltaReport.randomInsertFill
            let fixed = (Double(totals.entryHeaderBytes) / perPage + index) * Double(totals.replacedPages)
            let leafPages = Double(totals.replacedPages - totals.branchPages)
            let leafKeyframes = leafPages * max(Double(totals.leafKeyframeBytes - totals.leafDeltaBytes) / max(leafPages, 1), 0) / Double(k)
            let branchKeyframes = Double(min(totals.branchDeltaBytes, totals.branchKeyframeBytes))
            let packed = Double(totals.deltaBytes) + fixed + leafKeyframes + branchKeyframes
            return packed / commits + compactBookkeepingPerCommit
        }

        /// A version 2 history entry holding the root record and compact lists, plus today's time
        /// and lineage index share.
        var compactBookkeepingPerCommit: Double {
            let entry = Double(8 + 8 + HistoryDeltaReport.compactEntryFixedByteCount) + Double(totals.compactListBytes) / commits
            return entry / historyIndexFill + timeAndLineageBytesPerRoot
        }

        /// The file at the benchmark's full scale (100k records, 100k transactions, limitless) over
        /// SQLite's: live pages scaled to 100k records, the unpacked window, packed history.
        func fullScaleRatio(keyCount: Int, leafKeyframeEvery k: Int) -> Double {
            let live = Double(livePages * pageSize) * HistoryDeltaReport.fullRecords / Double(keyCount)
            let window = Double(HistoryDeltaReport.window) * Double(totals.fileGrowthBytes) / commits
            let history = HistoryDeltaReport.fullTransactions * packedBytesPerCommit(leafKeyframeEvery: k)
            return (live + window + history) / HistoryDeltaReport.sqliteFullBytes
        }
    }

    let columns: [Column]
    let keyCount: Int
    let commits: Int

    func table() -> String {
        var lines = ["Packed history survey: \(keyCount) records (24-byte keys, 150-byte values), \(commits) commits each, limitless", ""]
        lines.append("| measurement | " + columns.map(\.name).joined(separator: " | ") + " |")
        lines.append("|---" + String(repeating: "|---", count: columns.count) + "|")
        func row(_ name: String, _ value: (Column) -> String) { lines.append("| \(name) | " + columns.map(value).joined(separator: " | ") + " |") }
        func number(_ value: Double, _ digits: Int = 0) -> String { value.formatted(digits) }
        row("pages replaced per commit (leaf / branch)") {
            "\(number($0.pagesPerCommit, 1)) (\(number(Double($0.totals.leafPages) / $0.commits, 1)) / \(number(Double($0.totals.branchPages) / $0.commits, 1)))"
        }
        row("today: file growth per commit") { "\(number(Double($0.totals.fileGrowthBytes) / $0.commits)) B" }
        row("today: root page and list chunks per commit") { "\(number(Double($0.totals.rootRecordPages * $0.pageSize) / $0.commits)) B" }
        row("today: history index per root (fill)") { "\(number($0.historyIndexBytesPerRoot)) B (\(number($0.historyIndexFill * 100))%)" }
        row("today: time + lineage index per root") { "\(number($0.timeAndLineageBytesPerRoot)) B" }
        row("dead + introduced entries per commit") {
            "\(number(Double($0.totals.deadEntries) / $0.commits, 1)) + \(number(Double($0.totals.introducedEntries) / $0.commits, 1))"
        }
        row("lists today (16 B an entry) / compact") {
            "\(number(Double(16 * ($0.totals.deadEntries + $0.totals.introducedEntries)) / $0.commits)) B / \(number(Double($0.totals.compactListBytes) / $0.commits)) B"
        }
        row("delta per leaf / per branch") {
            "\(number(Double($0.totals.leafDeltaBytes) / Double(max($0.totals.leafPages, 1)))) B / \(number(Double($0.totals.branchDeltaBytes) / Double(max($0.totals.branchPages, 1)))) B"
        }
        row("delta per page, header blanked / whole page") {
            "\(number(Double($0.totals.deltaBytes) / $0.perPage)) B / \(number(Double($0.totals.rawDeltaBytes) / $0.perPage)) B"
        }
        row("keyframe per leaf / per branch (no base)") {
            "\(number(Double($0.totals.leafKeyframeBytes) / Double(max($0.totals.replacedPages - $0.totals.branchPages, 1)))) B / \(number(Double($0.totals.branchKeyframeBytes) / Double(max($0.totals.branchPages, 1)))) B"
        }
        row("pack entry header per page") { "\(number(Double($0.totals.entryHeaderBytes) / $0.perPage, 1)) B" }
        row("pack index per page (estimate)") {
            _ = $0
            return "\(number(Double(Self.packIndexEntryByteCount) / Self.randomInsertFill)) B"
        }
        row("v2 bookkeeping per commit (estimate)") { "\(number($0.compactBookkeepingPerCommit)) B" }
        for k in [8, 16, 32, 64] {
            row("v2 per commit, leaf keyframe every \(k)") { "\(number($0.packedBytesPerCommit(leafKeyframeEvery: k))) B" }
        }
        row("encode / decode per page (debug build)") {
            "\(number(Double($0.totals.encodeNanoseconds) / $0.perPage / 1000, 1)) µs / \(number(Double($0.totals.decodeNanoseconds) / $0.perPage / 1000, 1)) µs"
        }
        row("live pages at the head") { "\($0.livePages)" }
        for k in [16, 32, 64] {
            row("full-scale file ÷ SQLite, leaf keyframe every \(k)") {
                $0.name.hasPrefix("10") ? "\(number($0.fullScaleRatio(keyCount: keyCount, leafKeyframeEvery: k), 2))x" : "-"
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension Double {
    fileprivate func formatted(_ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (self * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(rounded)
    }
}
