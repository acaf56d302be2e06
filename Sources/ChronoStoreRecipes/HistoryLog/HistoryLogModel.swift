// An @Observable view model over a history log: newest-first pages that follow the log's changes.
public import Observation
import ChronoStore

/// The entries a list view shows, newest first, loaded a page at a time and kept current.
///
/// ```swift
/// @State var model = HistoryLogModel(log: tape)
/// List(model.entries) { Text($0.entry) }
///     .task { await model.follow() }                 // reloads when the log changes
///     .onAppear { Task { try await model.loadMore() } }
/// ```
/// Needs the Observation module: macOS 14, iOS 17 and their peers (any Linux with Swift 6).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable
public final class HistoryLogModel<Entry: Codable & Sendable> {
    /// The loaded entries, newest first.
    public private(set) var entries: [LoggedEntry<Entry>] = []
    /// Whether older entries remain to load.
    public private(set) var hasMore = true
    /// The last error met while loading, if any.
    public private(set) var lastError: (any Error)?
    /// The log shown.
    @ObservationIgnored public let log: HistoryLog<Entry>
    /// Entries per page.
    @ObservationIgnored public let pageSize: Int

    /// A model over `log`, loading `pageSize` entries at a time. Nothing loads until asked.
    public init(log: HistoryLog<Entry>, pageSize: Int = 50) {
        self.log = log
        self.pageSize = max(pageSize, 1)
    }

    /// Loads the next (older) page.
    public func loadMore() async throws {
        guard hasMore else { return }
        let page = try await log.page(before: entries.last?.id, limit: pageSize)
        entries += page
        hasMore = page.count == pageSize
    }

    /// Reloads the entries shown, from the newest down to the oldest shown (at least one page),
    /// picking up appends, deletes and retention.
    public func reload() async throws {
        guard let oldest = entries.last?.id else {
            hasMore = true
            return try await loadMore()
        }
        entries = try await log.entries(from: oldest)
        hasMore = try await !log.page(before: entries.last?.id ?? oldest, limit: 1).isEmpty
    }

    /// Reloads after every commit that changes the log (this process's, undo, other processes'),
    /// until the calling task is cancelled or the store closes. Call it from a view's `.task`.
    public func follow() async {
        do {
            // Subscribe before the first reload: a change committed between the two is then
            // delivered (and reloads again) instead of being missed.
            let changes = log.datastore.changes()
            try await reload()
            for try await change in changes where change.identifier.first == log.name {
                _ = change
                try await reload()
            }
        } catch {
            lastError = error
        }
    }
}
