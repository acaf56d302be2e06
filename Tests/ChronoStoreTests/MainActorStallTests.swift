// Waiting for another process's writer suspends the caller: the main actor keeps running.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

/// Records the longest gap between wake-ups of a task that sleeps 1 ms at a time, on the main
/// actor or (`detached`) on Swift's cooperative thread pool.
@MainActor final class Ticker {
    private var task: Task<Duration, Never>?

    func start(detached: Bool = false) {
        // Timed from now, not from the task's first run: work that blocks the actor before the
        // task gets to run must count as a gap too.
        let clock = ContinuousClock()
        let begin = clock.now
        let loop: @Sendable () async -> Duration = {
            var last = begin
            var longest = Duration.zero
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
                let now = clock.now
                longest = max(longest, now - last)
                last = now
            }
            return longest
        }
        task = detached ? Task.detached(operation: loop) : Task { @MainActor in await loop() }
    }

    /// Stops the ticker; returns the longest gap it saw.
    func stop() async -> Duration {
        task?.cancel()
        return await task?.value ?? .zero
    }
}

/// Lets the writer processes commit after `delay` seconds, from a thread outside the pool.
final class WriterRelease: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`:
    private var statuses: [Int32]?
    private var waiter: CheckedContinuation<[Int32], Never>?

    init(after delay: TimeInterval, _ writers: [WriterProcess]) {
        Thread.detachNewThread { [self] in
            Thread.sleep(forTimeInterval: delay)
            let results = writers.map { $0.finish().status }
            let waiting = lock.withLock { () -> CheckedContinuation<[Int32], Never>? in
                statuses = results
                return waiter
            }
            waiting?.resume(returning: results)
        }
    }

    /// The writers' exit statuses, once they have all ended.
    var value: [Int32] {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Int32], Never>) in
                let done = lock.withLock { () -> [Int32]? in
                    if statuses == nil { waiter = continuation }
                    return statuses
                }
                if let done { continuation.resume(returning: done) }
            }
        }
    }
}

/// The other process holds its writer for 2 s; a thread blocked by the wait would show a gap of
/// about that. The bound is half of it, well above the scheduling noise of a loaded machine
/// (gaps of ~100 ms were seen running the whole suite, 318 ms beside a thread-sanitizer run;
/// alone, they are ~10 ms). How small the gaps are is a benchmark's question, not a test's.
let holdSeconds = 2.0
let stallBound: Duration = .seconds(1)

@Suite(.serialized) struct MainActorStallTests {
    @MainActor @Test func aTransactionOnTheMainActorWaitsForAnotherProcessWithoutStallingIt() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-stall")
        let path = directory.file("shared.chrono")
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: path))
        let counters = store.datastore(CounterFormat.self)
        try await counters.persist(Counter(id: "before", value: 0))

        let writer = try await Task.detached { try WriterProcess(holdingWriterOf: path) }.value
        // Released from a thread of its own: other tests' synchronous waits may hold every
        // thread of the cooperative pool for a while.
        let statuses = WriterRelease(after: holdSeconds, [writer])
        let ticker = Ticker()
        let poolTicker = Ticker()
        ticker.start()
        poolTicker.start(detached: true)
        let clock = ContinuousClock()
        let started = clock.now
        try await store.transaction(label: "After the other process") {
            try await counters.persist(Counter(id: "after", value: 1))
        }
        let waited = clock.now - started
        let (longestGap, poolGap) = (await ticker.stop(), await poolTicker.stop())
        print("transaction waited \(waited) for the other process; longest main-actor gap \(longestGap), pool-task gap \(poolGap)")

        #expect(await statuses.value == [0])
        // The transaction really waited for the other process's writer...
        #expect(waited >= .seconds(holdSeconds * 0.8))
        // ...while the main actor kept running (a blocked main thread would show a ~2 s gap). A
        // sleeping task is woken through the cooperative pool, so when parallel tests' blocking
        // calls held every pool thread (the pool ticker shows it), the main actor's gap says
        // nothing about this store; a main thread blocked by the store shows with a free pool.
        #expect(longestGap < stallBound || poolGap >= longestGap * 0.8, "main \(longestGap), pool \(poolGap)")
        #expect(try await counters.count() == 2)
        try await store.close()
    }

    @MainActor @Test func anAsyncOpenOnTheMainActorBesideAnotherProcessesWriterKeepsItRunning() async throws {
        let directory = try TemporaryDirectory(prefix: "typed-open")
        let path = directory.file("shared.chrono")
        try await ChronoStore.open(at: URL(fileURLWithPath: path)).close()
        let writer = try await Task.detached { try WriterProcess(holdingWriterOf: path) }.value
        let statuses = WriterRelease(after: holdSeconds, [writer])
        let ticker = Ticker()
        let poolTicker = Ticker()
        ticker.start()
        poolTicker.start(detached: true)
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: path))
        #expect(try await store.datastore(CounterFormat.self).count() == 0)
        try await store.datastore(CounterFormat.self).persist(Counter(id: "mine", value: 1))  // waits for the writer
        let (longestGap, poolGap) = (await ticker.stop(), await poolTicker.stop())
        print("open and write beside another process's writer; longest main-actor gap \(longestGap), pool-task gap \(poolGap)")
        #expect(await statuses.value == [0])
        // As in the first test: a gap the starved pool explains (a thread-sanitizer run on a
        // loaded machine showed 13 s) says nothing about this store; with a free pool it must be short.
        #expect(longestGap < stallBound || poolGap >= longestGap * 0.8, "main \(longestGap), pool \(poolGap)")
        try await store.close()
    }

    @MainActor @Test func storesWaitingForOtherProcessesLeaveTheCooperativePoolFree() async throws {
        // More stores waiting at once than the pool has threads.
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let directory = try TemporaryDirectory(prefix: "typed-pool")
        var stores: [ChronoStore] = []
        var writers: [WriterProcess] = []
        for index in 0..<count {
            let path = directory.file("store-\(index).chrono")
            stores.append(try await ChronoStore.open(at: URL(fileURLWithPath: path)))
            writers.append(try await Task.detached { try WriterProcess(holdingWriterOf: path) }.value)
        }
        // Released from a thread of its own: a starved pool must show up as a gap, not a hang.
        let statuses = WriterRelease(after: holdSeconds, writers)
        let mainTicker = Ticker()
        let poolTicker = Ticker()
        mainTicker.start()
        poolTicker.start(detached: true)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores {
                group.addTask { try await store.datastore(CounterFormat.self).persist(Counter(id: "x", value: 1)) }
            }
            try await group.waitForAll()
        }
        let (mainGap, poolGap) = (await mainTicker.stop(), await poolTicker.stop())
        print("\(count) stores waited; longest main-actor gap \(mainGap), longest pool-task gap \(poolGap)")

        #expect(await statuses.value == Array(repeating: 0, count: count))
        #expect(mainGap < stallBound)
        #expect(poolGap < stallBound)
        for store in stores {
            #expect(try await store.datastore(CounterFormat.self).count() == 1)
            try await store.close()
        }
    }
}
