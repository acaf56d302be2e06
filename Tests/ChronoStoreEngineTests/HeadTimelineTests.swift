// Reads by date follow the head: after undo, redo, revert and checkout, not only commits.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// What the head was over time, as a test saw it: (time, head) after every operation.
private struct HeadModel {
    var events: [(milliseconds: Int64, head: TransactionID)] = []

    /// The head after the last operation at or before `milliseconds`.
    func head(at milliseconds: Int64) -> TransactionID? {
        events.last { $0.milliseconds <= milliseconds }?.head
    }
}

@Suite("Head timeline")
struct HeadTimelineTests {
    static let start: Int64 = 1_750_000_000_000

    private func makeStore(_ directory: TemporaryDirectory, _ clock: ManualClock, retention: RetentionPolicy) throws -> Store {
        var options = StoreOptions(retention: retention)
        options.clock = clock.wallClock
        return try Store.create(at: directory.file("timeline.chrono"), options: options)
    }

    /// The root a read as of `milliseconds` sees, or the error it throws.
    private func rootRead(_ store: Store, at milliseconds: Int64) -> Result<TransactionID, StoreError> {
        do {
            let read = try store.beginRead(at: .time(milliseconds))
            defer { read.close() }
            return .success(read.root.transaction)
        } catch let error as StoreError {
            return .failure(error)
        } catch {
            return .failure(.transactionFailed)
        }
    }

    @Test func aReadAsOfATimeAfterAnUndoReturnsTheHeadAsItWasThenNotTheUndoneRoot() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try makeStore(directory, clock, retention: .limitless)
        defer { try? store.close() }
        clock.now += 10
        let first = try store.write { try $0.put(bytes("k"), bytes("one"), in: "c") }.1!
        clock.now += 10
        let second = try store.write { try $0.put(bytes("k"), bytes("two"), in: "c") }.1!
        clock.now += 10
        try store.undo()
        let undoTime = clock.now
        clock.now += 10
        #expect(try rootRead(store, at: undoTime).get() == first)
        #expect(try rootRead(store, at: undoTime - 1).get() == second)
        // The present reads the head, and so does a time just before it.
        #expect(try rootRead(store, at: clock.now).get() == first)
        #expect(try rootRead(store, at: clock.now - 1).get() == first)
        clock.now += 10
        try store.redo()
        let redoTime = clock.now
        clock.now += 10
        #expect(try rootRead(store, at: redoTime - 1).get() == first)
        #expect(try rootRead(store, at: redoTime).get() == second)
        // The timeline is in the file: a reopened store answers the same.
        try store.close()
        let reopened = try Store.open(at: directory.file("timeline.chrono"), options: { var o = StoreOptions(); o.clock = clock.wallClock; return o }())
        defer { try? reopened.close() }
        #expect(try rootRead(reopened, at: undoTime).get() == first)
        #expect(try rootRead(reopened, at: redoTime).get() == second)
        let read = try reopened.beginRead(at: .time(undoTime + 5))
        #expect(text(try read.value(forKey: bytes("k"), in: "c")) == "one")
        read.close()
    }

    @Test func randomUndoRedoRevertAndCommitSequencesReadByDateAsTheModelSays() throws {
        let seed = SeededGenerator.seed()
        print("HeadTimelineTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        var store = try makeStore(directory, clock, retention: .limitless)
        defer { try? store.close() }
        var model = HeadModel()
        model.events.append((Self.start, try store.snapshot.head.transaction))
        var values: [TransactionID: String] = [try store.snapshot.head.transaction: ""]
        for step in 0..<300 {
            // Several operations may share a millisecond.
            clock.now += Int64.random(in: 0...3, using: &random)
            let roots = try store.history(allBranches: true).map(\.id)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let value = "value \(step)"
                let root = try store.write { try $0.put(bytes("k"), bytes(value), in: "c") }.1!
                values[root] = value
            case 4..<6: _ = try? store.undo(steps: Int.random(in: 1...2, using: &random))
            case 6..<8: _ = try? store.redo()
            case 8:
                let target = roots.randomElement(using: &random)!
                let root = try store.revert(to: target)
                values[root] = values[target]
            default:
                try store.close()
                var options = StoreOptions()
                options.clock = clock.wallClock
                store = try Store.open(at: directory.file("timeline.chrono"), options: options)
            }
            model.events.append((clock.now, try store.snapshot.head.transaction))
        }
        clock.now += 5
        for milliseconds in (Self.start - 2)...(clock.now) {
            let expected = model.head(at: milliseconds)
            switch rootRead(store, at: milliseconds) {
            case .success(let root):
                #expect(root == expected, "seed \(seed), at \(milliseconds - Self.start)")
                let read = try store.beginRead(at: .time(milliseconds))
                let value = text(try read.value(forKey: bytes("k"), in: "c")) ?? ""
                read.close()
                #expect(value == values[root], "seed \(seed), at \(milliseconds - Self.start)")
            case .failure(let error):
                #expect(expected == nil && error == .noRootAtOrBefore(milliseconds: milliseconds), "seed \(seed): \(error)")
            }
        }
        #expect(try store.verify().isSound)
    }

    @Test func underLastNAReadByDateNeverReturnsARootThatWasNotTheHeadThen() throws {
        let seed = SeededGenerator.seed()
        print("HeadTimelineTests bounded seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try makeStore(directory, clock, retention: .lastRoots(4))
        defer { try? store.close() }
        var model = HeadModel()
        model.events.append((Self.start, try store.snapshot.head.transaction))
        for step in 0..<400 {
            clock.now += Int64.random(in: 1...3, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: try store.write { try $0.put(bytes("k"), bytes("value \(step)"), in: "c") }
            case 1: _ = try? store.undo()
            default: _ = try? store.redo()
            }
            model.events.append((clock.now, try store.snapshot.head.transaction))
        }
        var answered = 0
        for milliseconds in (Self.start)...(clock.now) {
            let expected = model.head(at: milliseconds)
            switch rootRead(store, at: milliseconds) {
            case .success(let root):
                answered += 1
                #expect(root == expected, "seed \(seed), at \(milliseconds - Self.start)")
            case .failure(.rootNotRetained(let root)):
                #expect(root == expected, "seed \(seed), at \(milliseconds - Self.start)")
            case .failure(let error):
                #expect(error == .noRootAtOrBefore(milliseconds: milliseconds), "seed \(seed): \(error)")
            }
        }
        // Recent times are answered, and the timeline stays bounded (2N + 2 records).
        #expect(answered > 0)
        #expect(try store.snapshot.state.headTimelineCount <= 10)
        #expect(try store.verify().isSound)
    }

    @Test func aStoreWithoutATimelineGetsOneSeededFromCommitTimesAtItsFirstHeadChange() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("v1.chrono")
        try FileManager.default.copyItem(atPath: FormatFixture.store, toPath: path)
        let probe = try Store.open(at: path)
        let items = try probe.history(allBranches: true)
        try probe.close()
        let times = Set(items.map(\.timeMilliseconds)).sorted()
        let clock = ManualClock(times.last! + 1000)
        var options = StoreOptions()
        options.clock = clock.wallClock
        let store = try Store.open(at: path, options: options)
        defer { try? store.close() }
        #expect(try store.snapshot.state.headTimeline.isNone)
        // What reads by time answered from commit times alone, at each commit time.
        let before = try times.map { try rootRead(store, at: $0).get() }
        let head = try store.snapshot.head.transaction
        let after = try store.write { try $0.put(bytes("k"), bytes("after"), in: "c") }.1!
        #expect(try store.snapshot.state.headTimelineCount == UInt64(items.count) + 1)
        #expect(try times.map { try rootRead(store, at: $0).get() } == before)
        clock.now += 10
        #expect(try store.undo() == head)
        clock.now += 10
        #expect(try rootRead(store, at: clock.now - 15).get() == after)
        #expect(try rootRead(store, at: clock.now - 5).get() == head)
        #expect(try store.verify().isSound)
    }

    @Test func clearingHistoryLeavesOnlyTheHeadOnTheTimeline() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try makeStore(directory, clock, retention: .limitless)
        defer { try? store.close() }
        for index in 0..<5 {
            clock.now += 10
            try store.write { try $0.put(bytes("k"), bytes("v\(index)"), in: "c") }
        }
        clock.now += 10
        try store.undo()
        let head = try store.snapshot.head.transaction
        clock.now += 10
        try store.clearHistory()
        #expect(try store.snapshot.state.headTimelineCount == 1)
        #expect(try rootRead(store, at: clock.now - 5).get() == head)
        #expect(rootRead(store, at: Self.start + 15) == .failure(.noRootAtOrBefore(milliseconds: Self.start + 15)))
    }

    @Test func compactionKeepsReadsByDateOnTheHeadItReplaced() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let store = try makeStore(directory, clock, retention: .limitless)
        defer { try? store.close() }
        clock.now += 10
        try store.write { try $0.put(bytes("k"), bytes("one"), in: "c") }
        clock.now += 10
        try store.write { try $0.put(bytes("k"), bytes(String(repeating: "two", count: 2000)), in: "c") }
        clock.now += 10
        try store.undo()
        clock.now += 10
        try store.redo()
        let redoTime = clock.now
        clock.now += 10
        _ = try store.compact()
        let head = try store.snapshot.head.transaction
        #expect(try rootRead(store, at: redoTime).get() == head)
        #expect(try rootRead(store, at: redoTime - 15).get() == head)
        let read = try store.beginRead(at: .time(redoTime))
        #expect(text(try read.value(forKey: bytes("k"), in: "c"))?.hasPrefix("two") == true)
        read.close()
        #expect(try store.verify().isSound)
    }
}
