// Creating a new store file and opening an existing one.

extension Store {
    /// Creates a new store at `path` and opens it.
    ///
    /// The new store holds one empty root (root 1), so the first real commit can be undone. It is
    /// written whole under a temporary name and then linked into place, so other processes see
    /// a complete store at `path` or nothing.
    /// - Throws: ``StoreError/storeAlreadyExists(path:)`` if anything exists at `path`,
    ///   ``StoreError/invalidPageSize(_:)``, or an I/O error (then no file is left behind).
    package static func create(at path: String, options: StoreOptions = StoreOptions()) throws -> Store {
        let pageSize = options.pageSize ?? PageSize.standard
        try PageSize.validate(pageSize)
        try options.retention.validate()
        if Platform.fileExists(path) { throw StoreError.storeAlreadyExists(path: path) }
        guard try publishNewStore(at: path, pageSize: pageSize, options: options) else {
            throw StoreError.storeAlreadyExists(path: path)
        }
        return try open(at: path, options: options, readOnly: false, justCreated: true)
    }

    /// Opens the store at `path`, creating it if nothing is there. Several processes may call
    /// this for one missing path at once: one creates the store, and all of them open it.
    package static func openOrCreate(at path: String, options: StoreOptions = StoreOptions()) throws -> Store {
        let pageSize = options.pageSize ?? PageSize.standard
        try PageSize.validate(pageSize)
        if !Platform.fileExists(path) {
            let created = try publishNewStore(at: path, pageSize: pageSize, options: options)
            return try open(at: path, options: options, readOnly: false, justCreated: created)
        }
        return try open(at: path, options: options, readOnly: false, justCreated: false)
    }

    /// Writes a new store under a temporary name beside `path`, syncs it, and links it into
    /// place (`link` never replaces a file). Returns false when another file took `path` first.
    private static func publishNewStore(at path: String, pageSize: Int, options: StoreOptions) throws -> Bool {
        let temporary = temporaryPath(beside: path)
        do {
            defer { _ = Platform.removeFile(temporary) }
            do {
                let file = try PosixFile(path: temporary, create: true)
                try writeInitialImage(to: file, pageSize: pageSize, options: options)
            }
            if Platform.link(temporary, path) != 0 {
                let code = Platform.lastError
                if code == Platform.alreadyExists { return false }
                throw IOError(operation: "link", path: path, code: code)
            }
            try PosixFile.synchronizeDirectory(containing: path)
            return true
        } catch let error as IOError {
            throw StoreError.io(error)
        }
    }

    /// Opens the store at `path`, recovering from a crash if needed.
    ///
    /// Locks and shared state follow the data file, not the name: the path is resolved
    /// (symbolic links followed), the writer lock and reader pins are taken on the data file
    /// itself, and after marking the store open the path is checked to still name the file
    /// opened (a store replaced meanwhile is opened again). Opening never waits for a writer:
    /// while another process writes, it opens the newest state whose sync has finished.
    ///
    /// With `readOnly`, the data file is opened for reading only and nothing is created or
    /// written (no lock file, no recovery marks): it reads a consistent head, even on read-only
    /// media. Writes then throw ``StoreError/readOnlyStore(path:)``.
    ///
    /// Cost: O(1) after a clean close; otherwise O(pages of the newest transaction).
    /// - Throws: ``StoreError/storeNotFound(path:)``, ``StoreError/notAStore(path:)``,
    ///   ``StoreError/truncatedStore(path:byteCount:expectedAtLeast:)``,
    ///   ``StoreError/unsupportedFormatVersion(found:supported:)``,
    ///   ``StoreError/pageSizeMismatch(stored:requested:)``, ``StoreError/noValidHeaderSlot(path:)``.
    ///   Nothing is written when opening fails.
    package static func open(at path: String, options: StoreOptions = StoreOptions(), readOnly: Bool = false) throws -> Store {
        try open(at: path, options: options, readOnly: readOnly, justCreated: false)
    }

    private static func open(at path: String, options: StoreOptions, readOnly: Bool, justCreated: Bool) throws -> Store {
        // A store replaced between opening the file and marking it open is opened again; a
        // replacement takes well under a second, so a bounded number of tries suffices.
        for _ in 0..<100 {
            if let store = try openOnce(at: path, options: options, readOnly: readOnly, justCreated: justCreated) {
                return store
            }
        }
        throw StoreError.storeInUse(path: path)
    }

    /// One attempt at opening; nil when the path stopped naming the file it opened.
    private static func openOnce(at path: String, options: StoreOptions, readOnly: Bool, justCreated: Bool) throws -> Store? {
        guard Platform.fileExists(path), let resolved = Platform.resolvedPath(path) else {
            throw StoreError.storeNotFound(path: path)
        }
        let file: PosixFile
        let identity: FileIdentity
        do {
            file = try PosixFile(path: resolved, create: false, readOnly: readOnly)
            identity = try file.identity()
        } catch let error as IOError { throw StoreError.io(error) }
        let locks = FileLocks(file: file)
        do { try locks.markOpen() } catch let error as IOError { throw StoreError.io(error) }
        guard Platform.identity(atPath: resolved) == identity else { return nil }
        let preamble = try readPreamble(file, path: path, options: options)
        // The lock file is created only for a file that is a store; it is never removed, since
        // another process may be opening it at the same moment.
        let coordination: CoordinationFile?
        do {
            coordination = try CoordinationFile.open(path: resolved + ".lock", identity: identity, readOnly: readOnly)
        } catch let error as IOError { throw StoreError.io(error) }
        let access = StoreAccess(
            coordination: coordination, fileLocks: locks, identity: identity, resolvedPath: resolved, isReadOnly: readOnly,
            hasSeveralNames: file.linkCount > 1)
        // Recovery needs the writer lock to mark anything; without waiting for a busy writer,
        // open its newest finished state instead and leave the marking to the first write.
        let holdsWriter: Bool
        do { holdsWriter = readOnly ? false : try locks.tryLockWriter() } catch let error as IOError { throw StoreError.io(error) }
        defer { if holdsWriter { locks.unlockWriter() } }
        return try finishOpening(
            file: file, path: path, preamble: preamble, options: options, access: access, holdsWriter: holdsWriter,
            justCreated: justCreated)
    }
    /// Creates a store inside `file` (an empty in-memory or fault-injecting file) and opens it.
    package static func create(in file: any StoreFile, options: StoreOptions = StoreOptions()) throws -> Store {
        let pageSize = options.pageSize ?? PageSize.standard
        try PageSize.validate(pageSize)
        try options.retention.validate()
        do { try writeInitialImage(to: file, pageSize: pageSize, options: options) } catch let error as IOError { throw StoreError.io(error) }
        let preamble = try readPreamble(file, path: file.name, options: options)
        return try finishOpening(
            file: file, path: file.name, preamble: preamble, options: options, access: StoreAccess(), holdsWriter: true,
            justCreated: true)
    }

    /// Opens a store kept in `file`, without a lock file (one process only).
    package static func open(file: any StoreFile, options: StoreOptions = StoreOptions()) throws -> Store {
        let preamble = try readPreamble(file, path: file.name, options: options)
        return try finishOpening(
            file: file, path: file.name, preamble: preamble, options: options, access: StoreAccess(), holdsWriter: true,
            justCreated: false)
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
        // Room for the copy an interrupted format upgrade leaves at offset 1536.
        if size >= UInt64(FilePreamble.copyOffset + FilePreamble.byteCount) {
            bytes = [UInt8](repeating: 0, count: FilePreamble.copyOffset + FilePreamble.byteCount)
            do {
                _ = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
            } catch let error as IOError {
                throw StoreError.io(error)
            }
        }
        let preamble = try bytes.withUnsafeBytes { try FilePreamble.decodeWithCopy($0, path: path) }
        if let requested = options.pageSize, requested != preamble.pageSize {
            throw StoreError.pageSizeMismatch(stored: preamble.pageSize, requested: requested)
        }
        if size < UInt64(preamble.pageSize) * 2 {
            throw StoreError.truncatedStore(path: path, byteCount: size, expectedAtLeast: UInt64(preamble.pageSize) * 2)
        }
        return preamble
    }

    private static func finishOpening(
        file: any StoreFile, path: String, preamble: FilePreamble, options: StoreOptions, access: StoreAccess,
        holdsWriter: Bool, justCreated: Bool
    ) throws -> Store {
        let cache = PageCache(pageCapacity: 64)
        let pageFile = PageFile(file: file, pageSize: preamble.pageSize, cache: cache)
        // Commits published from here on are noticed by the first read (and their pages are
        // not trusted before it pins).
        let counterBeforeRecovery = access.coordination?.changeCounter ?? 0
        // Without a lock file no other process can be writing (a writer makes one): then every
        // slot that checks out may be adopted.
        let outcome: Recovery.Outcome
        if (holdsWriter && !access.isReadOnly) || access.coordination == nil {
            outcome = try Recovery.recover(pageFile, path: path, syncedSequence: access.coordination?.syncedSequence ?? 0)
        } else {
            let coordination = access.coordination
            outcome = try Recovery.recoverWhileOthersWrite(pageFile, path: path) { coordination?.syncedSequence ?? 0 }
        }
        let store = Store(path: path, file: file, preamble: preamble, options: options, access: access, recovered: outcome)
        store.rememberChangeCounter(counterBeforeRecovery)
        // A durable commit needs no marking: its writer synced it before it let go of the lock,
        // and it marks its state verified when it closes. Otherwise the chosen state may have
        // reached only the OS cache (or its sync failed), and recovery may have walked back
        // through unsynced states whose pages later commits will reuse: write its pages again,
        // make it durable and mark it verified before anything builds on it. That needs the
        // writer lock; without it, the first write does it.
        if outcome.checkedPages && !outcome.chosenSlotIsDurable && !access.isReadOnly {
            if holdsWriter {
                try store.markRecoveredStateDurable(checkedPages: outcome.checkedPageList)
            } else {
                store.expectUnsyncedNewest()
            }
        }
        // Ids never repeat. In this boot, the lock file's floor covers every id any writer began;
        // after a reboot, or without a lock file, commits a power loss dropped (at most the
        // unsynced ones) may have left pages under ids the disk no longer records: skip past them,
        // and raise the shared floor too, so the next opener in this boot does not undo the jump.
        let continuesThisBoot = access.coordination?.continuesThisBoot ?? false
        if !justCreated && !continuesThisBoot { store.skipIdsLostInCrash() }
        access.coordination?.beginBoot(floorAtLeast: store.reservedTransactionFloor)
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
        let now = options.clock.nowMilliseconds()
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
        state.secureDelete = options.secureDelete
        state.packs.keyOrder = .birthFirst
        state.packs.namesEntries = options.secureDelete
        state.headMayReachPackedVersions = false
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
