// How a store is opened: page size, durability, cache size and checkpointing.

/// When a commit is made durable.
package enum Durability: Sendable, Equatable {
    /// Each commit returns only after one `fdatasync` (`F_FULLFSYNC` on Darwin) made it durable.
    case durable
    /// Commits return without syncing. The store stays consistent after a crash but may lose the
    /// newest commits on power loss; a sync happens every `checkpointInterval` commits (sooner
    /// once those commits wrote `checkpointByteLimit` bytes of pages), on ``Store/synchronize()``
    /// and on close.
    case deferred
}

/// Options for creating or opening a store.
package struct StoreOptions: Sendable, Equatable {
    /// Page size for a new store (a power of two from 4 KiB to 64 KiB). When opening, nil accepts
    /// whatever the store uses; a value that differs is an error.
    package var pageSize: Int?
    package var durability: Durability
    /// Memory for cached pages, in bytes.
    package var cacheByteCount: Int
    /// In ``Durability/deferred`` mode, how many commits may pass between syncs.
    package var checkpointInterval: Int
    /// In ``Durability/deferred`` mode, how many bytes of pages the commits since the last sync
    /// may write before the next commit syncs (default 32 MiB). Pages those commits release become
    /// reusable only after a sync, so without this bound a run of large deferred transactions
    /// grows the file by up to `checkpointInterval` transactions' worth of pages, left free inside
    /// the file for good (100 transactions of 1,000 puts into 100,000 records: 350 MB instead of
    /// 86 MB; Performance.md, "Deferred checkpoints by pages written").
    package var checkpointByteLimit = 32 << 20
    /// How many expired roots one commit drops at most; the rest wait for later commits. Roots
    /// that snapshots or readers pin, and fork points, are stepped over without counting.
    package var pruneBatchLimit: Int
    /// How many pages a write transaction keeps in memory before it writes leaf and large-value
    /// pages out early (they stay uncommitted until the commit). Bounds a large transaction's
    /// memory at about this many pages.
    package var dirtyPageLimit: Int
    /// For a new store: how much history to keep (changeable later with ``Store/setRetention(_:)``).
    package var retention: RetentionPolicy
    /// For a new store: drop an undone branch as soon as a new commit branches off.
    package var dropsUndoneBranches: Bool
    /// The clock commits, snapshots and `days` retention read (tests replace it to make time jump).
    package var clock: WallClock = .system
    /// How old page versions are packed into deltas (format version 2 stores).
    package var packing: HistoryPacking = .standard
    /// For a new store: overwrite every freed page with zeros once it is reusable (see
    /// `Store+SecureDelete.swift`). Kept in the state; commits of such a store always sync.
    package var secureDelete = false
    /// Read committed pages through a read-only memory map of the data file (as LMDB does)
    /// instead of `pread` into cached copies: no system call and no copy per page, and each page
    /// version is verified once per mapping. Writes still go through `pwrite`, so the commit
    /// protocol is the same either way. Turn it off for files on network file systems, or where
    /// another program might shorten the file while the store is open (a mapped read past the
    /// end of a file stops the process with `SIGBUS`).
    package var memoryMappedReads = true

    package init(
        pageSize: Int? = nil, durability: Durability = .durable, cacheByteCount: Int = 64 << 20,
        checkpointInterval: Int = 64, pruneBatchLimit: Int = 64, retention: RetentionPolicy = .lastRoots(1000),
        dropsUndoneBranches: Bool = false, dirtyPageLimit: Int = 65_536
    ) {
        self.dirtyPageLimit = dirtyPageLimit
        self.retention = retention
        self.dropsUndoneBranches = dropsUndoneBranches
        self.pageSize = pageSize
        self.durability = durability
        self.cacheByteCount = cacheByteCount
        // Commits lost to a crash are at most the unsynced ones; ids jump past them on recovery.
        self.checkpointInterval = min(max(checkpointInterval, 1), Int(Store.lostIdGap / 2))
        self.pruneBatchLimit = pruneBatchLimit
    }
}
