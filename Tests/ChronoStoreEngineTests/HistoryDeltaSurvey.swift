// Runs a history workload on the real engine and measures, commit by commit, what packed history
// would keep: each replaced page as a delta against its replacement, and compact root lists.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport

/// What one survey measured, summed over its commits.
struct HistoryDeltaTotals {
    var commits = 0
    var replacedPages = 0
    var leafPages = 0
    var branchPages = 0
    /// Pages with no counterpart in the new root (overflow pages, dropped trees): keyframes.
    var pagesWithoutBase = 0
    /// Pages whose counterpart has another kind (the tree changed height).
    var kindChanges = 0
    /// Pages whose counterpart was not born in the commit that replaced them.
    var basesBornEarlier = 0
    var leafDeltaBytes = 0
    var branchDeltaBytes = 0
    /// Deltas of the whole page, header included (what the codec alone does).
    var rawDeltaBytes = 0
    /// Each replaced page encoded with no base (its keyframe), leaves (and other pages) and branches.
    var leafKeyframeBytes = 0
    var branchKeyframeBytes = 0
    /// Pack entry headers (base reference, checksum, run, length), varint coded.
    var entryHeaderBytes = 0
    var deadEntries = 0
    var introducedEntries = 0
    /// The two lists coded compactly: sorted page numbers as varint gaps, births as varint
    /// distances from the root id.
    var compactListBytes = 0
    /// Root pages and list chunk pages the commits wrote (kept while the root is retained).
    var rootRecordPages = 0
    var fileGrowthBytes: UInt64 = 0
    var encodeNanoseconds: UInt64 = 0
    var decodeNanoseconds: UInt64 = 0

    var deltaBytes: Int { leafDeltaBytes + branchDeltaBytes }
    var keyframeBytes: Int { leafKeyframeBytes + branchKeyframeBytes }
}

/// A store loaded with `keyCount` records (24-byte random keys, 150-byte random values, as the
/// benchmark's history workload), then `commits` transactions of `updatesPerCommit` updates of
/// random existing keys (or, with `appends`, inserts of new keys after every existing one, as an
/// event log writes), under limitless retention so every replaced page stays readable.
struct HistoryDeltaSurvey {
    static let keyByteCount = 24
    static let valueByteCount = 150
    let keyCount: Int
    let updatesPerCommit: Int
    let commits: Int
    let seed: UInt64
    var appends = false

    func run(in directory: TemporaryDirectory) throws -> (totals: HistoryDeltaTotals, store: Store) {
        var generator = SeededGenerator(seed: seed)
        let store = try Store.create(
            at: directory.file("survey.chrono"), options: StoreOptions(durability: .deferred, retention: .limitless))
        let keys = (0..<keyCount).map { _ in generator.bytes(Self.keyByteCount) }
        try store.write { transaction in
            for key in keys { try transaction.put(key, generator.bytes(Self.valueByteCount), in: "records") }
        }
        var totals = HistoryDeltaTotals()
        let startSize = try store.pageFile.file.byteCount()
        var parent = try store.beginRead()
        var appended: UInt32 = 0
        for _ in 0..<commits {
            try store.write { transaction in
                for _ in 0..<updatesPerCommit {
                    try transaction.put(nextKey(keys, &generator, &appended), generator.bytes(Self.valueByteCount), in: "records")
                }
            }
            let head = try store.beginRead()
            try measureCommit(parent: parent, head: head, into: &totals)
            parent.close()
            parent = head
        }
        parent.close()
        totals.fileGrowthBytes = try store.pageFile.file.byteCount() - startSize
        return (totals, store)
    }

    /// A random existing key, or for appends a key above all others (0xFF, then a counter).
    private func nextKey(_ keys: [[UInt8]], _ generator: inout SeededGenerator, _ appended: inout UInt32) -> [UInt8] {
        guard appends else { return keys[Int.random(in: 0..<keys.count, using: &generator)] }
        appended += 1
        return [0xFF] + withUnsafeBytes(of: appended.bigEndian) { Array($0) }
    }

    private func measureCommit(parent: ReadTransaction, head: ReadTransaction, into totals: inout HistoryDeltaTotals) throws {
        let reader = head.treeReader
        let root = try LoadedRoot(head.snapshot.state.head, reader: reader)
        let dead = try root.invalidatedPages(reader: reader)
        let introduced = try root.introducedPages(reader: reader)
        totals.commits += 1
        totals.deadEntries += dead.count
        totals.introducedEntries += introduced.count
        totals.compactListBytes += Self.compactListByteCount(dead: dead, introduced: introduced, root: root.record.transaction)
        totals.rootRecordPages += try root.metadataPages(reader: reader).count
        let pairing = ReplacedPagePairing(reader: reader, dead: Set(dead))
        let pairs = try pairing.pairs(parentCatalog: parent.snapshot.head.catalog, newCatalog: head.snapshot.head.catalog)
        for pair in pairs {
            if let base = pair.base, base.birth != root.record.transaction { totals.basesBornEarlier += 1 }
            try measure(pair, into: &totals)
        }
    }

    private func measure(_ pair: ReplacedPage, into totals: inout HistoryDeltaTotals) throws {
        totals.replacedPages += 1
        let old = Array(pair.old.readOnly)
        let base = pair.base.map { Array($0.readOnly) } ?? []
        if pair.base == nil { totals.pagesWithoutBase += 1 }
        if let other = pair.base, other.kindByte != pair.old.kindByte { totals.kindChanges += 1 }
        let started = ContinuousClock.now
        let delta = PackedPageForm.delta(of: old, base: base)
        totals.encodeNanoseconds += Self.nanoseconds(since: started)
        let decodeStarted = ContinuousClock.now
        let rebuilt = try PackedPageForm.rebuild(
            delta, base: base, reference: pair.old.reference, checksum: PackedPageForm.checksum(of: old), pageSize: old.count)
        totals.decodeNanoseconds += Self.nanoseconds(since: decodeStarted)
        guard rebuilt.readOnly.elementsEqual(old) else { throw SurveyMismatch(reference: pair.old.reference) }
        totals.rawDeltaBytes += PageDelta.encode(old, base: base).count
        let keyframe = PackedPageForm.delta(of: old, base: []).count
        totals.entryHeaderBytes += PackedPageForm.entryHeaderByteCount(
            for: pair.old.reference, base: pair.base?.reference, deltaByteCount: delta.count)
        if pair.old.kindByte == PageKind.branch.rawValue {
            totals.branchPages += 1
            totals.branchDeltaBytes += delta.count
            totals.branchKeyframeBytes += keyframe
        } else {
            if pair.old.kindByte == PageKind.leaf.rawValue { totals.leafPages += 1 }
            totals.leafDeltaBytes += delta.count
            totals.leafKeyframeBytes += keyframe
        }
    }

    /// Dead list: (page, birth) sorted by page, as varint page gaps and varint root − birth.
    /// Introduced list: sorted page numbers as varint gaps (every birth is the root's).
    static func compactListByteCount(dead: [PageReference], introduced: [PageReference], root: TransactionID) -> Int {
        var count = 0
        var previous: UInt64 = 0
        for reference in dead.sorted(by: { $0.page < $1.page }) {
            count += DeltaWriter.varintSize(Int(reference.page.rawValue - previous))
            count += DeltaWriter.varintSize(Int(root.rawValue - reference.birth.rawValue))
            previous = reference.page.rawValue
        }
        previous = 0
        for reference in introduced.sorted(by: { $0.page < $1.page }) {
            count += DeltaWriter.varintSize(Int(reference.page.rawValue - previous))
            previous = reference.page.rawValue
        }
        return count
    }

    static func nanoseconds(since start: ContinuousClock.Instant) -> UInt64 {
        let elapsed = ContinuousClock.now - start
        return UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000)
    }
}

struct SurveyMismatch: Error {
    let reference: PageReference
}
