// Threads sharing one store: readers keep consistent, unchanging snapshots; writers take turns.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// What the threads of one test report to the test's own thread.
///
/// `@unchecked Sendable`: every field is guarded by `lock`.
final class ThreadReport: @unchecked Sendable {
    private let lock = Lock()
    private var recordedProblems: [String] = []
    private var commitCount = 0
    private var writerFinished = false
    private var snapshotsChecked = 0

    func problem(_ text: String) { lock.withLock { if recordedProblems.count < 50 { recordedProblems.append(text) } } }
    var problems: [String] { lock.withLock { recordedProblems } }

    func committed() { lock.withLock { commitCount += 1 } }
    var commits: Int { lock.withLock { commitCount } }

    func finishWriting() { lock.withLock { writerFinished = true } }
    var isWriterFinished: Bool { lock.withLock { writerFinished } }

    private var countersSeen: Set<Int> = []

    func checkedSnapshot(counter: Int = 0) {
        lock.withLock {
            snapshotsChecked += 1
            countersSeen.insert(counter)
        }
    }
    var checkedSnapshots: Int { lock.withLock { snapshotsChecked } }
    /// How many different commits the readers saw.
    var distinctCountersSeen: Int { lock.withLock { countersSeen.count } }
}

/// Runs each body on its own thread and waits for all of them.
func runOnThreads(_ bodies: [@Sendable () -> Void]) {
    let finished = DispatchSemaphore(value: 0)
    for body in bodies {
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
    for _ in bodies { finished.wait() }
}

/// Thrown by the writer when the store does not hold what its invariants promise.
struct InvariantBroken: Error, CustomStringConvertible {
    var description: String
}

/// The invariants the writer keeps in every commit `n`:
/// - "pair" holds "left" and "right", both equal to `n`;
/// - "accounts" holds 40 balances (with padding of varying length) summing to 40,000;
/// - "log" holds the newest min(`n`, 150) entries `entry-i`.
enum LedgerInvariant {
    static let accountCount = 40
    static let total = 40_000
    static let logLength = 150

    /// What one read transaction sees, reduced to what must not change while it lives.
    struct View: Equatable {
        var counter: Int
        var balances: [Int]
        var logCount: Int
        var logKeys: [String]
    }

    static func balance(_ value: [UInt8]) -> Int? { Int(String(decoding: value.prefix { $0 != 0x7C }, as: UTF8.self)) }

    static func encode(_ balance: Int, padding: Int) -> [UInt8] { bytes("\(balance)|" + String(repeating: "p", count: padding)) }

    /// Reads the view and checks the invariants; returns the problems found.
    static func read(_ reader: some CollectionReading) throws -> (View, [String]) {
        var problems: [String] = []
        let left = text(try reader.value(forKey: bytes("left"), in: "pair")).flatMap { Int($0) }
        let right = text(try reader.value(forKey: bytes("right"), in: "pair")).flatMap { Int($0) }
        if left == nil || left != right { problems.append("pair differs: left \(String(describing: left)), right \(String(describing: right))") }
        let counter = left ?? -1
        let balances = try entries(reader, "accounts").map { balance($0.1) ?? Int.min }
        if balances.count != accountCount || balances.reduce(0, &+) != total {
            problems.append("counter \(counter): \(balances.count) accounts summing to \(balances.reduce(0, &+))")
        }
        let logCount = try reader.count(in: "log")
        let logKeys = try entries(reader, "log").compactMap { text($0.0) }
        if logCount != min(counter, logLength) || logKeys.count != logCount {
            problems.append("counter \(counter): log count \(logCount), \(logKeys.count) log entries")
        }
        if try reader.value(forKey: bytes("entry-\(counter)"), in: "log") == nil {
            problems.append("counter \(counter): the log lacks entry-\(counter)")
        }
        return (View(counter: counter, balances: balances, logCount: logCount, logKeys: logKeys), problems)
    }

    /// Commit `n`: moves an amount between two accounts, rewrites a few with new padding,
    /// bumps the pair and appends to the log, dropping its oldest entry. It reads balances after
    /// editing others, so it also relies on a write transaction seeing its own edits.
    static func commit(_ number: Int, to store: Store, using generator: inout SeededGenerator) throws {
        let from = Int.random(in: 0..<accountCount, using: &generator)
        let to = Int.random(in: 0..<accountCount, using: &generator)
        let amount = Int.random(in: 0...50, using: &generator)
        let paddings = (0..<4).map { _ in Int.random(in: 0...400, using: &generator) }
        let extra = (0..<3).map { _ in Int.random(in: 0..<accountCount, using: &generator) }
        try store.write { transaction in
            let key = { (index: Int) in bytes("account-\(index)") }
            let current = { (index: Int) throws -> Int in
                guard let value = try transaction.value(forKey: key(index), in: "accounts"), let amount = balance(value) else {
                    throw InvariantBroken(description: "account-\(index) is missing or unreadable")
                }
                return amount
            }
            // Reads after edits see them: with from == to the amount comes back.
            try transaction.put(key(from), encode(try current(from) - amount, padding: paddings[0]), in: "accounts")
            try transaction.put(key(to), encode(try current(to) + amount, padding: paddings[1]), in: "accounts")
            for (position, index) in extra.enumerated() {
                try transaction.put(key(index), encode(try current(index), padding: paddings[(position + 2) % 4]), in: "accounts")
            }
            try transaction.put(bytes("left"), bytes("\(number)"), in: "pair")
            try transaction.put(bytes("entry-\(number)"), bytes(String(repeating: "e", count: number % 300)), in: "log")
            if number > logLength { try transaction.delete(bytes("entry-\(number - logLength)"), in: "log") }
            try transaction.put(bytes("right"), bytes("\(number)"), in: "pair")
        }
    }

    static func setUp(_ store: Store) throws {
        try store.write { transaction in
            for index in 0..<accountCount {
                try transaction.put(bytes("account-\(index)"), encode(total / accountCount, padding: index * 5), in: "accounts")
            }
            try transaction.put(bytes("left"), bytes("1"), in: "pair")
            try transaction.put(bytes("right"), bytes("1"), in: "pair")
            try transaction.put(bytes("entry-1"), bytes("e"), in: "log")
        }
    }
}

@Suite("Concurrency within a process")
struct ConcurrencyTests {
    /// Readers on four threads start, hold and re-read transactions while one writer commits:
    /// each sees every invariant hold, its view never changes while it lives, and the commits it
    /// sees only move forward.
    @Test(arguments: [Durability.durable, .deferred])
    func readersSeeConsistentUnchangingSnapshotsWhileAWriterCommits(durability: Durability) throws {
        let directory = try TemporaryDirectory(prefix: "chrono-threads")
        let store = try Store.create(
            at: directory.file("threads.chrono"),
            options: StoreOptions(durability: durability, cacheByteCount: 1 << 20, checkpointInterval: 8))
        defer { try? store.close() }
        try LedgerInvariant.setUp(store)
        let report = ThreadReport()
        let commitTarget = 300
        let longLived = try store.beginRead()
        let (longLivedView, longLivedProblems) = try LedgerInvariant.read(longLived)
        #expect(longLivedProblems == [])

        runOnThreads(
            [{ Self.writeLedger(to: store, through: commitTarget, report: report) }]
                + (1...4).map { thread in { Self.readLedger(from: store, thread: thread, report: report) } })

        #expect(report.problems == [])
        #expect(report.commits == commitTarget - 1)
        #expect(report.checkedSnapshots >= 12)
        #expect(report.distinctCountersSeen >= 5, "the readers should overlap many commits")
        // A reader opened before any of it still sees its own root, even with its pages evicted.
        store.pageFile.cache.removeAll()
        let (finalView, finalProblems) = try LedgerInvariant.read(longLived)
        #expect(finalProblems == [])
        #expect(finalView == longLivedView)
        longLived.close()
        let (newest, _) = try LedgerInvariant.read(try store.beginRead())
        #expect(newest.counter == commitTarget)
        #expect(try store.verify().problems == [])
    }

    /// The writer thread: commits 2 ... `last`, then says it has finished.
    private static func writeLedger(to store: Store, through last: Int, report: ThreadReport) {
        var generator = SeededGenerator(seed: 2024)
        do {
            for number in 2...last {
                try LedgerInvariant.commit(number, to: store, using: &generator)
                report.committed()
            }
        } catch {
            report.problem("writer: \(error)")
        }
        report.finishWriting()
    }

    /// A reader thread: until the writer finishes, starts a transaction, checks the invariants,
    /// holds it across a couple of commits, and checks that a second reading (from disk, with the
    /// cache emptied) sees exactly the same.
    private static func readLedger(from store: Store, thread: Int, report: ThreadReport) {
        var lastCounter = 0
        var round = 0
        while !report.isWriterFinished || round < 3 {
            round += 1
            do {
                let transaction = try store.beginRead()
                defer { transaction.close() }
                let (view, problems) = try LedgerInvariant.read(transaction)
                for problem in problems { report.problem("reader \(thread): \(problem)") }
                if view.counter < lastCounter { report.problem("reader \(thread): counter went back from \(lastCounter) to \(view.counter)") }
                lastCounter = view.counter
                let commitsBefore = report.commits
                var spins = 0
                while report.commits < commitsBefore + 2, !report.isWriterFinished, spins < 200 {
                    usleep(500)
                    spins += 1
                }
                store.pageFile.cache.removeAll()
                let (again, _) = try LedgerInvariant.read(transaction)
                if again != view { report.problem("reader \(thread): the view of counter \(view.counter) changed to \(again.counter)") }
                report.checkedSnapshot(counter: view.counter)
            } catch {
                report.problem("reader \(thread): \(error)")
                return
            }
        }
    }

    /// Writers on four threads each add to one counter in read-modify-write transactions: they
    /// take turns, so no increment is lost, while a reader keeps checking that the counter and
    /// the number of recorded increments agree.
    @Test func writersOnSeveralThreadsTakeTurns() throws {
        let directory = try TemporaryDirectory(prefix: "chrono-threads")
        let store = try Store.create(
            at: directory.file("writers.chrono"), options: StoreOptions(durability: .deferred, checkpointInterval: 16))
        defer { try? store.close() }
        let report = ThreadReport()
        let perThread = 60
        let writer: @Sendable (Int) -> Void = { thread in
            do {
                for index in 0..<perThread {
                    try store.write { transaction in
                        let counter = text(try transaction.value(forKey: bytes("counter"), in: "counter")).flatMap { Int($0) } ?? 0
                        try transaction.put(bytes("counter"), bytes("\(counter + 1)"), in: "counter")
                        try transaction.put(bytes("thread-\(thread)-\(index)"), bytes("\(counter)"), in: "increments")
                    }
                    report.committed()
                }
            } catch {
                report.problem("writer \(thread): \(error)")
            }
        }
        let reader: @Sendable () -> Void = {
            while report.commits < 4 * perThread, report.problems.isEmpty {
                do {
                    let transaction = try store.beginRead()
                    defer { transaction.close() }
                    let counter = text(try transaction.value(forKey: bytes("counter"), in: "counter")).flatMap { Int($0) } ?? 0
                    let increments = try transaction.count(in: "increments")
                    if counter != increments { report.problem("counter \(counter) but \(increments) increments") }
                    report.checkedSnapshot()
                } catch {
                    report.problem("reader: \(error)")
                }
            }
        }
        runOnThreads((0..<4).map { thread in { writer(thread) } } + [reader])

        #expect(report.problems == [])
        let transaction = try store.beginRead()
        defer { transaction.close() }
        #expect(text(try transaction.value(forKey: bytes("counter"), in: "counter")) == "\(4 * perThread)")
        let seen = try entries(transaction, "increments").compactMap { text($0.1).flatMap { Int($0) } }.sorted()
        #expect(seen == Array(0..<(4 * perThread)), "two writers read the same counter")
        #expect(try store.verify().problems == [])
    }
}
