// Single-put commits from several threads at once, for the group-commit workload.

import Foundation

extension KeyValueSubject {
    /// Commits each record of each range in its own transaction, one thread per range, all at
    /// once; returns when every thread is done, throwing the first error any of them met.
    func putEachFromThreads(_ records: RecordSet, _ ranges: [Range<Int>]) throws {
        let shared = ThreadShare(subject: self, records: records)
        let done = DispatchGroup()
        for range in ranges {
            done.enter()
            Thread {
                do {
                    try shared.subject.putEachInItsOwnTransaction(shared.records, range)
                } catch {
                    shared.record(error)
                }
                done.leave()
            }.start()
        }
        done.wait()
        if let error = shared.firstError { throw error }
    }
}

/// What the committing threads share. `@unchecked Sendable`: both engines' handles accept calls
/// from any thread (ChronoStore's writers take turns at its writer gate, GRDB's queue serializes
/// them); the records are only read; `firstError` is guarded by `lock`.
private final class ThreadShare<Subject: KeyValueSubject>: @unchecked Sendable {
    let subject: Subject
    let records: RecordSet
    private let lock = NSLock()
    private var error: (any Error)?

    init(subject: Subject, records: RecordSet) {
        self.subject = subject
        self.records = records
    }

    func record(_ error: any Error) {
        lock.lock()
        if self.error == nil { self.error = error }
        lock.unlock()
    }

    var firstError: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }
}
