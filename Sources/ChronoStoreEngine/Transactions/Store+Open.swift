// Creating a new store file and opening an existing one.

extension Store {
    /// Creates a new store at `path` and opens it.
    ///
    /// The new store holds one empty root (root 1), so the first real commit can be undone.
    /// - Throws: ``StoreError/storeAlreadyExists(path:)`` if anything exists at `path`,
    ///   ``StoreError/invalidPageSize(_:)``, or an I/O error (then no file is left behind).
    package static func create(at path: String, options: StoreOptions = StoreOptions()) throws -> Store {
        let pageSize = options.pageSize ?? PageSize.standard
        try PageSize.validate(pageSize)
        try options.retention.validate()
        if Platform.fileExists(path) { throw StoreError.storeAlreadyExists(path: path) }
        do {
            let file = try PosixFile(path: path, create: true)
            do {
                try writeInitialImage(to: file, pageSize: pageSize, options: options)
                try PosixFile.synchronizeDirectory(containing: path)
            } catch {
                _ = Platform.removeFile(path)
                throw error
            }
        } catch let error as IOError {
            throw StoreError.io(error)
        }
        return try open(at: path, options: options, justCreated: true)
    }

    /// Opens the store at `path`, recovering from a crash if needed.
    ///
    /// Cost: O(1) after a clean close; otherwise O(pages of the newest transaction).
    /// - Throws: ``StoreError/storeNotFound(path:)``, ``StoreError/notAStore(path:)``,
    ///   ``StoreError/truncatedStore(path:byteCount:expectedAtLeast:)``,
    ///   ``StoreError/unsupportedFormatVersion(found:supported:)``,
    ///   ``StoreError/pageSizeMismatch(stored:requested:)``, ``StoreError/noValidHeaderSlot(path:)``.
    ///   Nothing is written when opening fails.
    package static func open(at path: String, options: StoreOptions = StoreOptions()) throws -> Store {
        try open(at: path, options: options, justCreated: false)
    }

    private static func open(at path: String, options: StoreOptions, justCreated: Bool) throws -> Store {
        guard Platform.fileExists(path) else { throw StoreError.storeNotFound(path: path) }
        let file: PosixFile
        do { file = try PosixFile(path: path, create: false) } catch let error as IOError { throw StoreError.io(error) }
        let preamble = try readPreamble(file, path: path, options: options)
        // The lock file is created only for a file that is a store; it is never removed, since
        // another process may be opening it at the same moment.
        let coordination: CoordinationFile
        do { coordination = try CoordinationFile(path: path + ".lock") } catch let error as IOError {
            throw StoreError.io(error)
        }
        do { try coordination.lockWriter() } catch let error as IOError { throw StoreError.io(error) }
        defer { coordination.unlockWriter() }
        return try finishOpening(
            file: file, path: path, preamble: preamble, options: options, coordination: coordination, justCreated: justCreated)
    }

    /// Creates a store inside `file` (an empty in-memory or fault-injecting file) and opens it.
    package static func create(in file: any StoreFile, options: StoreOptions = StoreOptions()) throws -> Store {
        let pageSize = options.pageSize ?? PageSize.standard
        try PageSize.validate(pageSize)
        try options.retention.validate()
        do { try writeInitialImage(to: file, pageSize: pageSize, options: options) } catch let error as IOError { throw StoreError.io(error) }
        let preamble = try readPreamble(file, path: file.name, options: options)
        return try finishOpening(file: file, path: file.name, preamble: preamble, options: options, coordination: nil, justCreated: true)
    }

    /// Opens a store kept in `file`, without a lock file (one process only).
    package static func open(file: any StoreFile, options: StoreOptions = StoreOptions()) throws -> Store {
        let preamble = try readPreamble(file, path: file.name, options: options)
        return try finishOpening(file: file, path: file.name, preamble: preamble, options: options, coordination: nil, justCreated: false)
    }

    private static func readPreamble(_ file: any StoreFile, path: String, options: StoreOptions) throws -> FilePreamble {
        var bytes = [UInt8](repeating: 0, count: FilePreamble.byteCount)
        let complete: Bool
        do {
            complete = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
        } catch let error as IOError {
            throw StoreError.io(error)
        }
        let size = (try? file.byteCount()) ?? 0
        guard complete else {
            if size >= 8, Array(bytes[0..<8]) == FilePreamble.magic {
                throw StoreError.truncatedStore(path: path, byteCount: size, expectedAtLeast: UInt64(PageSize.minimum))
            }
            throw StoreError.notAStore(path: path)
        }
        let preamble = try bytes.withUnsafeBytes { try FilePreamble.decode($0, path: path) }
        if let requested = options.pageSize, requested != preamble.pageSize {
            throw StoreError.pageSizeMismatch(stored: preamble.pageSize, requested: requested)
        }
        if size < UInt64(preamble.pageSize) * 2 {
            throw StoreError.truncatedStore(path: path, byteCount: size, expectedAtLeast: UInt64(preamble.pageSize) * 2)
        }
        return preamble
    }

    private static func finishOpening(
        file: any StoreFile, path: String, preamble: FilePreamble, options: StoreOptions, coordination: CoordinationFile?,
        justCreated: Bool
    ) throws -> Store {
        let cache = PageCache(pageCapacity: 64)
        let pageFile = PageFile(file: file, pageSize: preamble.pageSize, cache: cache)
        let outcome = try Recovery.recover(pageFile, path: path)
        let store = Store(
            path: path, file: file, preamble: preamble, options: options, coordination: coordination, recovered: outcome)
        // A durable commit of a writer that is still running needs no marking: it synced before
        // it let go of the lock, and it marks its state verified when it closes. Otherwise the
        // chosen state may have reached only the OS cache, and recovery may have walked back
        // through unsynced states whose pages later commits will reuse: make it durable and mark
        // it verified before anything builds on it.
        let ownerStillRunning = outcome.chosenSlotIsDurable && (coordination?.hasOtherLiveOwners() ?? false)
        if outcome.checkedPages && !ownerStillRunning {
            try store.markRecoveredStateDurable()
        }
        // Ids never repeat. In this boot, the lock file's floor covers every id any writer began;
        // after a reboot, or without a lock file, commits a power loss dropped (at most the
        // unsynced ones) may have left pages under ids the disk no longer records: skip past them.
        if !justCreated && !(coordination?.continuesThisBoot ?? false) { store.skipIdsLostInCrash() }
        return store
    }

    /// Page 0 (preamble and slot 0), then root 1 (empty), state 1, the history index leaf and
    /// the time index leaf.
    static func writeInitialImage(to file: any StoreFile, pageSize: Int, options: StoreOptions) throws {
        let first = TransactionID(1)
        let rootReference = PageReference(page: PageID(1), birth: first)
        let stateReference = PageReference(page: PageID(2), birth: first)
        let historyReference = PageReference(page: PageID(3), birth: first)
        let timeReference = PageReference(page: PageID(4), birth: first)

        var generator = SystemRandomNumberGenerator()
        let identifier = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let now = Clock.nowMilliseconds()
        let header = PageBuffer(pageSize: pageSize)
        FilePreamble(
            formatVersion: FilePreamble.currentFormatVersion, pageSize: pageSize, creationMilliseconds: now,
            identifier: identifier
        ).encode(into: header.bytes)
        HeaderSlot(sequence: 1, state: stateReference, isVerified: true, isDurable: true)
            .encode(into: UnsafeMutableRawBufferPointer(rebasing: header.bytes[HeaderSlot.offsets[0]...]))

        let root = PageBuffer(pageSize: pageSize)
        RootRecord(transaction: first, parent: .none, timeMilliseconds: now, catalog: .none, label: nil)
            .encode(into: root.bytes)
        root.seal(kind: .root, page: rootReference.page, birth: first)

        let entry = HistoryEntry(
            rootPage: rootReference, historyParent: .none, lineageParent: .none, redoTarget: .none, depth: 0,
            timeMilliseconds: now, deadList: .empty, newList: .empty, deadListIsRootOwned: true, newListIsRootOwned: true)
        var state = StateRecord(
            transaction: first, previous: .none, syncedTransaction: first, head: rootReference,
            historyIndex: historyReference, freeTree: .none, pageCount: 5, tail: first, retainedRootCount: 1,
            freePageCount: 0)
        state.timeIndex = timeReference
        state.retention = options.retention
        state.dropsUndoneBranches = options.dropsUndoneBranches
        let statePage = PageBuffer(pageSize: pageSize)
        state.encode(into: statePage.bytes)
        statePage.seal(kind: .state, page: stateReference.page, birth: first)

        let history = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(LeafNode(keys: [HistoryIndex.key(first)], values: [entry.encoded()]), into: history)
        history.seal(kind: .leaf, page: historyReference.page, birth: first, count: 1)

        let times = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(LeafNode(keys: [HistoryTrees.timeKey(entry)], values: [.inline([])]), into: times)
        times.seal(kind: .leaf, page: timeReference.page, birth: first, count: 1)

        for (index, page) in [header, root, statePage, history, times].enumerated() {
            try file.write(UnsafeRawBufferPointer(page.bytes), at: UInt64(index * pageSize))
        }
        try file.synchronize()
    }
}
