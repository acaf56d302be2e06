// HistoryLog: background appends in order, newest-first pages, deletes, retention, the view model, relaunch.
import ChronoStore
import ChronoStoreRecipes
import ChronoStoreTestSupport
import Foundation
import Testing

@Suite struct HistoryLogTests {
    @Test func appendsCommitInOrderInTheBackgroundAndSurviveARelaunch() async throws {
        let directory = try TemporaryDirectory(prefix: "recipes")
        let url = URL(fileURLWithPath: directory.file("tape.chrono"))
        let store = try await ChronoStore.open(at: url)
        let tape = HistoryLog<String>(store: store, name: "tape")
        for index in 1...120 { tape.append("line \(index)") }
        try await tape.flush()
        #expect(try await tape.count() == 120)
        var pages: [[String]] = []
        var before: Int64?
        while true {
            let page = try await tape.page(before: before, limit: 50)
            if page.isEmpty { break }
            pages.append(page.map(\.entry))
            before = page.last?.id
        }
        #expect(pages.map(\.count) == [50, 50, 20])
        #expect(pages.joined().elementsEqual((1...120).reversed().map { "line \($0)" }), "newest first, in append order")
        try await store.close()

        let reopened = try await ChronoStore.open(at: url)
        let again = HistoryLog<String>(store: reopened, name: "tape")
        #expect(try await again.page(limit: 1).first?.entry == "line 120")
        again.append("after relaunch")
        try await again.flush()
        let newest = try await again.page(limit: 2)
        #expect(newest.map(\.entry) == ["after relaunch", "line 120"])
        #expect(newest[0].id == newest[1].id + 1)
        try await reopened.close()
    }

    @Test func deleteClearAndRetentionByCountAndAge() async throws {
        let store = try ChronoStore.inMemory()
        let recent = HistoryLog<Int>(store: store, name: "recent", retention: .init(maximumCount: 10))
        let other = HistoryLog<String>(store: store, name: "other", retention: .init(maximumAge: 3600))
        for value in 1...25 { recent.append(value) }
        let now = Date()
        other.append("two hours ago", date: now.addingTimeInterval(-7200))
        other.append("an hour and a bit ago", date: now.addingTimeInterval(-3700))
        other.append("now", date: now)
        try await recent.flush()
        try await other.flush()
        #expect(try await recent.page(limit: 100).map(\.entry) == Array((16...25).reversed()))
        #expect(try await other.page().map(\.entry) == ["now"], "older than an hour is dropped")

        let ids = try await recent.page(limit: 3).map(\.id)
        try await recent.delete(ids.prefix(2))
        #expect(try await recent.page(limit: 2).map(\.entry) == [23, 22])
        try await recent.clear()
        #expect(try await recent.count() == 0)
        #expect(try await other.count() == 1, "clearing one log leaves the others")
        recent.append(99)
        try await recent.flush()
        #expect(try await recent.page().first?.id == 26, "ids are never reused")
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func theViewModelPagesAndFollowsTheLog() async throws {
        let store = try ChronoStore.inMemory()
        let tape = HistoryLog<String>(store: store, name: "tape")
        for index in 1...7 { tape.append("e\(index)") }
        try await tape.flush()
        let model = HistoryLogModel(log: tape, pageSize: 3)
        try await model.loadMore()
        try await model.loadMore()
        #expect(model.entries.map(\.entry) == ["e7", "e6", "e5", "e4", "e3", "e2"])
        #expect(model.hasMore)
        try await model.loadMore()
        #expect(model.entries.count == 7 && !model.hasMore)

        let following = Task { await model.follow() }
        tape.append("e8")
        try await tape.flush()
        let deadline = ContinuousClock.now + .seconds(10)
        while model.entries.first?.entry != "e8" && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(model.entries.first?.entry == "e8")
        #expect(model.entries.count == 8)
        following.cancel()
        try await store.close()
        _ = await following.value
    }
}
