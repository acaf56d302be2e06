// Real pages from real commits: each replaced page rebuilds exactly from its delta against its
// replacement, and (with CHRONO_DELTA_REPORT=1) a table of what packed history would keep.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("History deltas")
struct HistoryDeltaTests {
    /// 60 commits of 10 updates over 2,000 records: every page a commit replaced has a base of
    /// its own kind born in that commit, and, blanked as a pack entry stores it, rebuilds byte for
    /// byte and verifies; leaf deltas cost about the old value, branch deltas a few dozen bytes.
    @Test func everyPageACommitReplacedRebuildsExactlyFromItsDeltaAgainstItsReplacement() throws {
        let directory = try TemporaryDirectory()
        let survey = HistoryDeltaSurvey(keyCount: 2_000, updatesPerCommit: 10, commits: 60, seed: 13)
        let (totals, store) = try survey.run(in: directory)
        defer { try? store.close() }
        #expect(totals.replacedPages >= 60 * 10)
        #expect(totals.pagesWithoutBase == 0 && totals.kindChanges == 0 && totals.basesBornEarlier == 0)
        let leafMean = totals.leafDeltaBytes / max(totals.leafPages, 1)
        let branchMean = totals.branchDeltaBytes / max(totals.branchPages, 1)
        print("leaf delta \(leafMean) bytes, branch delta \(branchMean) bytes")
        #expect(leafMean <= HistoryDeltaSurvey.valueByteCount + 40)
        #expect(branchMean <= 64)
    }

    /// What a reader of packed history sees when a pack entry is damaged: a typed error naming
    /// the page, never a wrong page.
    @Test func aDamagedPackedDeltaIsATypedErrorNamingThePage() throws {
        let directory = try TemporaryDirectory()
        let store = try Store.create(at: directory.file("damage.chrono"), options: StoreOptions(retention: .limitless))
        defer { try? store.close() }
        for index in 0..<300 { try store.write { try $0.put(bytes("key \(index)"), bytes("value \(index)"), in: "c") } }
        let before = try store.beginRead()
        defer { before.close() }
        try store.write { try $0.put(bytes("key 150"), bytes("changed"), in: "c") }
        let after = try store.beginRead()
        defer { after.close() }
        let dead = try LoadedRoot(after.snapshot.state.head, reader: after.treeReader).invalidatedPages(reader: after.treeReader)
        let pairs = try ReplacedPagePairing(reader: after.treeReader, dead: Set(dead))
            .pairs(parentCatalog: before.snapshot.head.catalog, newCatalog: after.snapshot.head.catalog)
        let leaf = try #require(pairs.first { $0.old.kindByte == PageKind.leaf.rawValue && $0.tree == .collection })
        let old = Array(leaf.old.readOnly)
        let base = Array(try #require(leaf.base).readOnly)
        let delta = PackedPageForm.delta(of: old, base: base)
        let checksum = PackedPageForm.checksum(of: old)
        let rebuilt = try PackedPageForm.rebuild(delta, base: base, reference: leaf.old.reference, checksum: checksum, pageSize: old.count)
        #expect(Array(rebuilt.readOnly) == old)
        let page = leaf.old.pageID
        // Any byte of the delta changed: a typed error, or (an operation that happens to copy
        // equal bytes) the right page; never a wrong page.
        var checksumFailures = 0
        for index in delta.indices {
            var changed = delta
            changed[index] ^= 0x40
            do {
                let result = try PackedPageForm.rebuild(changed, base: base, reference: leaf.old.reference, checksum: checksum, pageSize: old.count)
                #expect(Array(result.readOnly) == old, "byte \(index) changed gave a wrong page")
            } catch let error as StoreError {
                #expect(error.damagedPage == page)
                if error == .pageChecksumMismatch(page: page) { checksumFailures += 1 }
            }
        }
        #expect(checksumFailures > 0)
        // Cut short: does not decode.
        #expect(throws: StoreError.self) {
            try PackedPageForm.rebuild(Array(delta.dropLast()), base: base, reference: leaf.old.reference, checksum: checksum, pageSize: old.count)
        }
        // The right delta against the wrong base: fails the checksum.
        #expect(throws: StoreError.pageChecksumMismatch(page: page)) {
            try PackedPageForm.rebuild(delta, base: old, reference: leaf.old.reference, checksum: checksum, pageSize: old.count)
        }
    }

    /// `CHRONO_DELTA_REPORT=1 swift test --filter HistoryDeltaTests` prints the measurements
    /// behind Docs/RootChain.md's "Packed history" section. `CHRONO_DELTA_KEYS` (default 10,000)
    /// and `CHRONO_DELTA_COMMITS` (default 2,000) set the scale.
    @Test(.enabled(if: Environment.value("CHRONO_DELTA_REPORT") == "1"))
    func packedHistoryReport() throws {
        let keyCount = Environment.value("CHRONO_DELTA_KEYS").flatMap { Int($0) } ?? 10_000
        let commits = Environment.value("CHRONO_DELTA_COMMITS").flatMap { Int($0) } ?? 2_000
        var columns: [HistoryDeltaReport.Column] = []
        for (name, updates, appends) in [("10 updates/txn", 10, false), ("1 put/txn", 1, false), ("1 append/txn", 1, true)] {
            let directory = try TemporaryDirectory()
            var survey = HistoryDeltaSurvey(keyCount: keyCount, updatesPerCommit: updates, commits: commits, seed: 42)
            survey.appends = appends
            let (totals, store) = try survey.run(in: directory)
            defer { try? store.close() }
            columns.append(try HistoryDeltaReport.Column(name: name, totals: totals, store: store, keyCount: keyCount))
        }
        print(HistoryDeltaReport(columns: columns, keyCount: keyCount, commits: commits).table())
    }
}
