// Runs queued writes one after another on a background task, so callers never wait for them.
import Foundation

/// A serial queue of async writes: ``enqueue(_:)`` returns at once, the writes run in order on
/// one detached task, and ``flush()`` waits for those enqueued before it.
///
/// `@unchecked Sendable`: `lock` guards `firstError`; the stream's continuation is thread-safe.
final class BackgroundWriter: @unchecked Sendable {
    private enum Job {
        case write(@Sendable () async throws -> Void)
        case flush(CheckedContinuation<Void, Never>)
    }

    private let jobs: AsyncStream<Job>.Continuation
    private let lock = NSLock()
    private var firstError: (any Error)?

    init() {
        let (stream, continuation) = AsyncStream<Job>.makeStream()
        jobs = continuation
        Task.detached { [weak self] in
            for await job in stream {
                switch job {
                case .write(let body):
                    do { try await body() } catch { self?.record(error) }
                case .flush(let waiter): waiter.resume()
                }
            }
        }
    }

    deinit { jobs.finish() }

    func enqueue(_ body: @escaping @Sendable () async throws -> Void) { jobs.yield(.write(body)) }

    /// Waits for every write enqueued before it; throws (and forgets) the first failure since the last flush.
    func flush() async throws {
        await withCheckedContinuation { jobs.yield(.flush($0)) }
        if let error = takeError() { throw error }
    }

    /// The first failure since the last call, forgotten.
    private func takeError() -> (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        let error = firstError
        firstError = nil
        return error
    }

    private func record(_ error: any Error) {
        // NSLock's `withLock` needs macOS 14; the package supports macOS 13.
        lock.lock()
        if firstError == nil { firstError = error }
        lock.unlock()
    }
}
