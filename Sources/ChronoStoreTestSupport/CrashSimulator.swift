// Runs a workload against a fault-injecting file, crashes it at a chosen operation, and builds
// the disk image a power loss could leave behind.
package import ChronoStoreEngine

/// One crash experiment: a fresh in-memory store, a workload, a crash point.
package struct CrashSimulator {
    /// What the workload saw before the crash.
    package struct Run {
        /// The file, crashed (or not, if the workload finished first).
        package let file: FaultInjectingFile
        /// Whether the crash point was reached.
        package let crashed: Bool
    }

    package let pageSize: Int
    package let durability: Durability
    package let retention: RetentionPolicy
    package let packing: HistoryPacking
    /// Deferred mode: commits between syncs, and bytes of pages after which a commit syncs sooner.
    package let checkpoints: (interval: Int, byteLimit: Int)
    /// Whether the store is created with secure delete (freed pages zeroed; packs named entries).
    package let secureDelete: Bool

    package init(
        pageSize: Int = 4096, durability: Durability, retention: RetentionPolicy = .lastRoots(3),
        packing: HistoryPacking = .standard, checkpoints: (interval: Int, byteLimit: Int) = (3, 32 << 20),
        secureDelete: Bool = false
    ) {
        self.pageSize = pageSize
        self.durability = durability
        self.retention = retention
        self.packing = packing
        self.checkpoints = checkpoints
        self.secureDelete = secureDelete
    }

    package var options: StoreOptions {
        var options = StoreOptions(
            pageSize: pageSize, durability: durability, cacheByteCount: 1 << 20, checkpointInterval: checkpoints.interval,
            retention: retention)
        options.packing = packing
        options.checkpointByteLimit = checkpoints.byteLimit
        options.secureDelete = secureDelete
        return options
    }

    /// Creates a store in a fresh file, arms the crash after `crashAfter` file operations (nil: never),
    /// and runs `workload` until it finishes or the crash stops it.
    package func run(crashAfter: Int?, _ workload: (Store, FaultInjectingFile) throws -> Void) throws -> Run {
        let file = FaultInjectingFile(name: "crash-test")
        let store = try Store.create(in: file, options: options)
        file.crash(afterOperations: crashAfter)
        do {
            try workload(store, file)
        } catch {
            if !file.hasCrashed { throw error }
        }
        return Run(file: file, crashed: file.hasCrashed)
    }

    /// Counts the file operations the workload performs when nothing fails.
    package func operationCount(_ workload: (Store, FaultInjectingFile) throws -> Void) throws -> Int {
        let file = FaultInjectingFile(name: "count")
        let store = try Store.create(in: file, options: options)
        let before = file.writeCount + file.syncCount + file.truncateCount
        try workload(store, file)
        return file.writeCount + file.syncCount + file.truncateCount - before
    }
}
