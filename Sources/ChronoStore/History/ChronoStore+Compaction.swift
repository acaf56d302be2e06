// Shrinking the store's file from the typed API: compaction with progress.
import ChronoStoreEngine

/// How far a ``ChronoStore/compact(progress:)`` has got.
public struct CompactProgress: Sendable, Equatable {
    /// Live pages examined so far.
    public var pagesDone: Int
    /// Live pages to examine.
    public var pagesTotal: Int
    /// The fraction done, from 0 to 1.
    public var fractionCompleted: Double { pagesTotal == 0 ? 1 : min(1, Double(pagesDone) / Double(pagesTotal)) }
}

/// What a finished ``ChronoStore/compact(progress:)`` achieved.
public struct CompactionSummary: Sendable, Equatable {
    /// Pages moved from the file's tail to free pages nearer its start.
    public var pagesMoved: Int
    /// The file's size before, in bytes.
    public var byteCountBefore: UInt64
    /// The file's size after, in bytes.
    public var byteCountAfter: UInt64
}

extension ChronoStore {
    /// Shrinks the file: prunes history per the retention policy, moves the head's pages out of
    /// the file's tail onto free pages, and cuts off the free tail.
    ///
    /// The contents do not change: the rewrite is one commit equal to the head, which takes the
    /// head's place in history (undo from it goes where undo from the head went). Pages that
    /// older retained roots or snapshots still reach stay where they are, so with deep history
    /// the file shrinks less; ``clearHistory()`` first for the smallest file. Readers continue
    /// throughout; writers wait. The work runs on the store's own queue, so the caller's thread
    /// (the main thread included) is never blocked. Cost: O(live pages).
    /// - Parameter progress: called now and then from the store's queue (not the caller's actor).
    /// - Throws: ``ChronoStoreError/readOnlyStore(path:)``, ``ChronoStoreError/operationInsideTransaction(_:)``,
    ///   I/O errors.
    @discardableResult
    public func compact(progress: @escaping @Sendable (CompactProgress) -> Void = { _ in }) async throws -> CompactionSummary {
        try await historyOperation("compact") { [engine] in
            let report = try engine.compact { step in progress(CompactProgress(pagesDone: step.pagesDone, pagesTotal: step.pagesTotal)) }
            return CompactionSummary(
                pagesMoved: report.pagesMoved, byteCountBefore: report.byteCountBefore, byteCountAfter: report.byteCountAfter)
        }
    }
}
