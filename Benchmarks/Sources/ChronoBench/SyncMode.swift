// The two ways a commit may reach the disk, and what each means for each engine.

/// How commits are synced. Each mode pairs a ChronoStore durability with the SQLite setting
/// that gives the same promise.
enum SyncMode: String, Codable, Sendable {
    /// ChronoStore `.durable` (one `fdatasync` per commit) against SQLite WAL with
    /// `synchronous=FULL` (the WAL is synced at every commit).
    case durable
    /// ChronoStore `.deferred` (a sync every `checkpointInterval` commits) against SQLite WAL
    /// with `synchronous=NORMAL` (the WAL is synced only at checkpoints): both stay consistent
    /// and may lose the newest commits on power loss.
    case deferred

    var comparison: String {
        switch self {
        case .durable: "durable vs synchronous=FULL"
        case .deferred: "deferred vs synchronous=NORMAL"
        }
    }
}
