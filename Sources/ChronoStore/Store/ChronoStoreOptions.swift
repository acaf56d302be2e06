// How a store is opened: page size, durability, history retention and cache size.
import ChronoStoreEngine

/// When a commit is durable.
public enum Durability: Sendable, Equatable {
    /// Every commit returns only after one `fdatasync` (`F_FULLFSYNC` on Apple platforms) made
    /// it durable. A crash or power loss never loses a commit that returned.
    case durable
    /// Commits return without syncing; one sync happens every `checkpointInterval` commits (sooner
    /// when the commits since the last sync wrote 32 MiB of pages, so that large transactions
    /// reuse the pages they free instead of growing the file), on ``ChronoStore/synchronize()``
    /// and on ``ChronoStore/close()``. After a crash the store is consistent, but the newest
    /// unsynced commits may be gone. Much faster for bursts of small transactions.
    case deferred(checkpointInterval: Int = 64)
}

/// How much history a store keeps. Snapshots and roots that open readers use are always kept.
public enum HistoryRetention: Sendable, Equatable {
    /// The head and the `count - 1` roots before it on its undo line, plus the roots redo reaches:
    /// an undo depth of `count - 1`. A commit after an undo drops the undone roots. `count` runs
    /// from 1 to 2^40; others throw ``ChronoStoreError/invalidOptions(_:)``.
    case lastRoots(Int)
    /// Roots committed within the last `days` days (the head is always kept). `days` runs from 0
    /// to 1,000,000; others throw ``ChronoStoreError/invalidOptions(_:)``.
    case days(Int)
    /// Every root, until ``ChronoStore/clearHistory()``.
    case limitless

    var engineValue: RetentionPolicy {
        switch self {
        case .lastRoots(let count): .lastRoots(count)
        case .days(let days): .days(days)
        case .limitless: .limitless
        }
    }

    init(_ policy: RetentionPolicy) {
        switch policy {
        case .lastRoots(let count): self = .lastRoots(count)
        case .days(let days): self = .days(days)
        case .limitless: self = .limitless
        }
    }
}

/// Options for opening or creating a store.
public struct ChronoStoreOptions: Sendable, Equatable {
    /// Page size of a new store: a power of two from 4096 to 65536 (default 4096). When opening
    /// an existing store, nil accepts its page size; another value is an error.
    public var pageSize: Int?
    /// When commits are durable. Default ``Durability/durable``.
    public var durability: Durability
    /// For a new store: how much history to keep (default the last 1000 roots). Change it later
    /// with ``ChronoStore/setRetention(_:dropsUndoneBranches:)``.
    public var retention: HistoryRetention
    /// For a new store: forget an undone branch as soon as a new commit branches off.
    public var dropsUndoneBranches: Bool
    /// Memory for cached pages, in bytes (default 64 MiB). With ``memoryMappedReads`` (the
    /// default) pages are read from the operating system's file cache through the map instead,
    /// and this cache holds only pages this process committed.
    public var cacheByteCount: Int
    /// For a new store: overwrite every page the store frees with zeros (default false). Kept in
    /// the store; opening an existing store ignores it.
    ///
    /// A page is freed when no retained root, snapshot or reader reaches it any more: by
    /// pruning, ``ChronoStore/clearHistory()``, a write whose retention drops the previous head,
    /// or ``ChronoStore/compact()``. It is overwritten as soon as it could be reused: when the
    /// commit freeing it is durable and no reader of an older state is open (in any process).
    /// So once the history that held a deleted record is pruned, and no older reader is open,
    /// the commit returns only after the record's bytes are gone from the data file. Every
    /// commit of such a store syncs (as with ``Durability/durable``), and each freed page costs
    /// one page write. Old versions packed into deltas (packed history) are covered too: a
    /// commit that frees some of a pack page's versions rewrites the others elsewhere and frees
    /// the page. It cannot reach copies elsewhere: backups, file system snapshots or
    /// copy-on-write file systems, and blocks an SSD remapped internally.
    public var secureDelete = false
    /// Read the data file through a read-only memory map (default true), as LMDB does: a read
    /// neither calls the system nor copies the page, and each page version is checked (checksum,
    /// identity, structure) the first time it is read through the map. Writes and their
    /// durability are the same either way.
    ///
    /// Set it to false for a store on a network file system, or where another program might cut
    /// the data file short while the store is open: reading a mapped page past the end of the
    /// file stops the process (`SIGBUS`) where a copied read would report a damaged store.
    public var memoryMappedReads = true
    /// Keep the old page versions that retained history needs as deltas against their newer
    /// versions, packed densely (packed history; default true). History then costs about what
    /// changed: with ten updated records a transaction and the last 100 roots kept, about a third
    /// of the file that whole old pages take.
    ///
    /// Packing is processor time: in a durable store mostly spent in packing commits of their
    /// own, built while the commit before them waits for its sync (still about a quarter of a
    /// ten-update durable commit's time under the last 100 roots on the benchmark's machine;
    /// Docs/Performance.md, "Packing commits"), elsewhere inside commits. The newest few roots are never
    /// packed, and secure delete pays for it with extra page writes. Set it to false where
    /// commit speed matters more than the file's size: this handle's commits then keep old
    /// versions as whole pages. It is not stored: versions packed before stay packed and read
    /// the same, and the next handle opened with it true packs again.
    public var packsHistory = true

    /// Options with the defaults described on each property.
    public init(
        pageSize: Int? = nil, durability: Durability = .durable, retention: HistoryRetention = .lastRoots(1000),
        dropsUndoneBranches: Bool = false, cacheByteCount: Int = 64 << 20
    ) {
        self.pageSize = pageSize
        self.durability = durability
        self.retention = retention
        self.dropsUndoneBranches = dropsUndoneBranches
        self.cacheByteCount = cacheByteCount
    }

    var engineValue: StoreOptions {
        var options = StoreOptions(
            pageSize: pageSize, cacheByteCount: max(cacheByteCount, 0), retention: retention.engineValue,
            dropsUndoneBranches: dropsUndoneBranches)
        options.secureDelete = secureDelete
        options.memoryMappedReads = memoryMappedReads
        if !packsHistory { options.packing = .disabled }
        switch durability {
        case .durable: options.durability = .durable
        case .deferred(let interval):
            options.durability = .deferred
            options.checkpointInterval = max(interval, 1)
        }
        return options
    }
}
