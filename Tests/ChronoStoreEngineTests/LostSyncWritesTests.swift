// A failed sync whose writes the OS dropped: reopening must not trust the cache.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

@Suite("Writes lost by a failed sync")
struct LostSyncWritesTests {
    /// A store whose last commit's sync failed and lost its writes (Linux semantics), closed;
    /// returns the file, the contents before that commit, and the commit's edits.
    private func storeAfterALostSync() throws -> (FaultInjectingFile, [[UInt8]: [UInt8]], SyncFailureSupport.Edits) {
        let file = FaultInjectingFile(name: "lost-sync")
        let store = try Store.create(in: file)
        var model: [[UInt8]: [UInt8]] = [:]
        try SyncFailureSupport.commit(store, prefix: "good", into: &model)
        file.failSyncs(1, losingWrites: true)
        let failed = SyncFailureSupport.Edits(prefix: "failed", count: 40)
        #expect(throws: StoreError.self) { try SyncFailureSupport.commit(store, failed) }
        try store.close()
        return (file, model, failed)
    }

    /// Linux marks pages clean after a failed writeback: reads still see them, no sync writes
    /// them. A reopen in the same boot reads the failed commit back from the cache; before it
    /// builds on it or marks it verified, it must write its pages again.
    @Test func reopeningAfterAFailedSyncThatLostItsWritesSurvivesAPowerLoss() throws {
        let (file, model, failed) = try storeAfterALostSync()
        // Same boot: the cache still holds the failed commit, so the reopened store may take it.
        let reopened = try Store.open(file: file)
        let seen = try SyncFailureSupport.everything(reopened)
        #expect(seen == ["items": model] || seen == ["items": failed.applied(to: model)])
        var expected = seen["items"] ?? [:]
        try SyncFailureSupport.commit(reopened, prefix: "after", into: &expected)
        try reopened.close()

        // Power loss: only what reached the disk survives, and it must be whole.
        let afterPowerLoss = try Store.open(file: FaultInjectingFile(name: "disk", image: file.durableImage))
        #expect(try afterPowerLoss.verify().problems == [])
        #expect(try SyncFailureSupport.everything(afterPowerLoss) == ["items": expected])
        try afterPowerLoss.close()
    }

    /// The same with the power lost right after the reopen marked the recovered state.
    @Test func theStateARecoveryMarksVerifiedIsOnDisk() throws {
        let (file, _, _) = try storeAfterALostSync()
        let reopened = try Store.open(file: file)
        let seen = try SyncFailureSupport.everything(reopened)
        let afterPowerLoss = try Store.open(file: FaultInjectingFile(name: "disk", image: file.durableImage))
        #expect(try afterPowerLoss.verify().problems == [])
        #expect(try SyncFailureSupport.everything(afterPowerLoss) == seen)
        try afterPowerLoss.close()
        try reopened.close()
    }
}
