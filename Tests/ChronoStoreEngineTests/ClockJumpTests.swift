// Commit times when the wall clock jumps: later commits carry real time, days(N) prunes by real age.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

/// A wall clock a test sets by hand. `@unchecked Sendable`: `lock` guards `milliseconds`.
final class ManualClock: @unchecked Sendable {
    private let lock = Lock()
    private var milliseconds: Int64

    init(_ milliseconds: Int64) { self.milliseconds = milliseconds }

    var now: Int64 {
        get { lock.withLock { milliseconds } }
        set { lock.withLock { milliseconds = newValue } }
    }

    var wallClock: WallClock { WallClock { [self] in now } }
}

@Suite("Clock jumps")
struct ClockJumpTests {
    static let start: Int64 = 1_750_000_000_000
    static let day: Int64 = 86_400_000

    @Test func aCommitStampedInTheFutureNeitherStampsLaterCommitsNorStopsDaysPruning() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        var options = StoreOptions(retention: .days(1))
        options.clock = clock.wallClock
        let store = try Store.create(at: directory.file("clock.chrono"), options: options)
        defer { try? store.close() }
        try store.write { try $0.put(bytes("k"), bytes("before"), in: "c") }
        // The clock runs ten years ahead for one commit, then is corrected.
        clock.now = Self.start + 3650 * Self.day
        let future = try store.write { try $0.put(bytes("k"), bytes("future"), in: "c") }.1!
        clock.now = Self.start + 1000
        // A read as of now is a read of the head, though the head was stamped in the future.
        let now = try store.beginRead(at: .time(clock.now))
        #expect(now.root.transaction == future)
        now.close()
        let corrected = try store.write { try $0.put(bytes("k"), bytes("corrected"), in: "c") }.1!
        let items = try store.history()
        #expect(items.first { $0.id == corrected }?.timeMilliseconds == Self.start + 1000)
        // The future root was committed before the corrected one, so its recorded time is lowered.
        #expect(items.first { $0.id == future }?.timeMilliseconds == Self.start + 1000)
        #expect(items.map(\.timeMilliseconds) == items.map(\.timeMilliseconds).sorted(by: >))
        // Two days on, everything but the head is older than a day, the future root included.
        clock.now = Self.start + 2 * Self.day
        let later = try store.write { try $0.put(bytes("k"), bytes("later"), in: "c") }.1!
        #expect(try store.history(allBranches: true).map(\.id) == [later])
        let report = try store.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func aClockThatGoesBackStampsCommitsWithTheRealTimeAndKeepsTimesInCommitOrder() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        var options = StoreOptions(retention: .limitless)
        options.clock = clock.wallClock
        let store = try Store.create(at: directory.file("back.chrono"), options: options)
        defer { try? store.close() }
        let first = try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }.1!
        clock.now = Self.start + 5000
        let second = try store.write { try $0.put(bytes("k"), bytes("2"), in: "c") }.1!
        clock.now = Self.start + 3000
        let third = try store.write { try $0.put(bytes("k"), bytes("3"), in: "c") }.1!
        let times = Dictionary(uniqueKeysWithValues: try store.history().map { ($0.id, $0.timeMilliseconds) })
        #expect(times[first] == Self.start)
        #expect(times[second] == Self.start + 3000)
        #expect(times[third] == Self.start + 3000)
        // As-of by time follows the recorded times: between the first and the third, the first.
        let between = try store.beginRead(at: .time(Self.start + 2000))
        #expect(between.root.transaction == first)
        between.close()
        // Survives a reopen: the recorded times live in the history and time indexes.
        try store.close()
        let reopened = try Store.open(at: directory.file("back.chrono"), options: options)
        defer { try? reopened.close() }
        #expect(try reopened.history().first { $0.id == second }?.timeMilliseconds == Self.start + 3000)
        let report = try reopened.verify()
        #expect(report.isSound && report.leakedPageCount == 0)
    }

    @Test func randomSequencesUnderDaysKeepNothingOlderThanTheWindowButForksAndPins() throws {
        let seed = SeededGenerator.seed()
        print("ClockJumpTests seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        for run in 0..<4 {
            let directory = try TemporaryDirectory()
            let clock = ManualClock(Self.start)
            var options = StoreOptions(retention: .days(1))
            options.clock = clock.wallClock
            // Packing inside commits: a commit built on a packing commit not yet synced keeps the
            // newest synced state's head as its crash fallback (group commit's pin), so such a
            // root can outlive the window by one commit, which this check right after each commit
            // would report.
            options.packing.inBackground = false
            let store = try Store.create(at: directory.file("days.chrono"), options: options)
            defer { try? store.close() }
            var model = RetentionModel()
            for step in 0..<80 {
                // Mostly minutes apart, sometimes hours, now and then a jump ahead or back.
                switch Int.random(in: 0..<20, using: &random) {
                case 0: clock.now += 30 * Self.day
                case 1: clock.now -= Int64.random(in: 0...(2 * Self.day), using: &random)
                case 2...6: clock.now += Int64.random(in: 0...(6 * 3_600_000), using: &random)
                default: clock.now += Int64.random(in: 0...600_000, using: &random)
                }
                let before = try store.snapshot.state.transaction
                let operation = try model.step(store, random: &random)
                // Pruning runs at commits: check right after one.
                guard try store.snapshot.head.transaction > before else { continue }
                let problem = try Self.rootsOlderThanTheWindow(store, now: clock.now, readerRoots: model.readerRoots)
                #expect(problem == nil, "seed \(seed) run \(run) step \(step) (\(operation)): \(problem ?? "")")
                if problem != nil { return }
            }
            model.closeReaders()
            let report = try store.verify()
            #expect(report.isSound && report.leakedPageCount == 0, "seed \(seed) run \(run): \(report)")
        }
    }

    /// A retained root recorded more than a day before `now` that is not the head, not pinned and
    /// not a lineage fork point (where a pinned root's or a revert's lineage meets another).
    static func rootsOlderThanTheWindow(_ store: Store, now: Int64, readerRoots: Set<TransactionID>) throws -> String? {
        let state = try store.snapshot.state
        let trees = HistoryTrees(state: state)
        let reader = try store.beginRead()
        defer { reader.close() }
        let pinned = Set(try store.snapshots().map(\.root)).union(readerRoots)
        let all = try store.history(allBranches: true)
        for item in all where !item.isHead && !pinned.contains(item.id) && item.timeMilliseconds < now - day {
            let children = try trees.lineageChildren(of: item.id, reader: reader.treeReader)
            if children.count < 2 {
                return "root \(item.id.rawValue) recorded at \(item.timeMilliseconds), now \(now), lineage children \(children.map(\.rawValue))"
            }
        }
        return nil
    }

    @Test func afterAnUndoAReadAsOfNowIsAReadOfTheHead() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        var options = StoreOptions(retention: .limitless)
        options.clock = clock.wallClock
        let store = try Store.create(at: directory.file("undo.chrono"), options: options)
        defer { try? store.close() }
        let first = try store.write { try $0.put(bytes("k"), bytes("1"), in: "c") }.1!
        clock.now += 10
        try store.write { try $0.put(bytes("k"), bytes("2"), in: "c") }
        clock.now += 10
        try store.undo()
        let now = try store.beginRead(at: .time(clock.now))
        #expect(now.root.transaction == first)
        #expect(text(try now.value(forKey: bytes("k"), in: "c")) == "1")
        now.close()
    }
}
