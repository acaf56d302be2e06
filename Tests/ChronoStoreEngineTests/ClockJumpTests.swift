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
