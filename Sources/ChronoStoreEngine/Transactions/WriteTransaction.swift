// A write transaction: copy-on-write edits to the collections, committed as one new root.

import Dispatch

/// The single writer of a store. Edits are private until ``commit()`` publishes them as a new
/// root; ``abort()`` (or throwing from the transaction's closure) discards them, and the pages
/// they used are reused. Not thread-safe: use it from one task at a time.
package final class WriteTransaction: CollectionReadingBase, TreeEditing {
    struct CollectionState {
        var tree: BTree
        var count: UInt64
        var exists: Bool
    }

    let store: Store
    /// The state this transaction started from.
    package let base: StoreSnapshot
    package let transaction: TransactionID
    let pageSize: Int
    let treeReader: SnapshotReader
    /// The catalog as of the base root; collection edits are folded into it at commit.
    var catalogTree: BTree
    /// `@exclusivity(unchecked)`, like `dirty`, `introducedPages` and `spilled` below: a write
    /// transaction is used from one thread at a time and every access to these is a single
    /// lookup, insertion, removal or copy that calls back into nothing (their run-time checks
    /// were most of the exclusivity cost of a put; issue 14).
    @exclusivity(unchecked) var collections = CollectionEdits()
    /// An optional "action name" recorded in the new root.
    package var label: String?
    /// History changes (head moves, reverts, retention) this transaction makes.
    @exclusivity(unchecked) var history = PendingHistoryChange()
    /// How many roots the commit pruned.
    var prunedCount = 0
    /// Roots whose reason to stay may have gone in this commit (a fork point that lost a branch,
    /// a deleted snapshot's root): pruning looks at them again, wherever its cursor is.
    var rootsToRevisit: Set<TransactionID> = []
    /// Roots of dropped branches that only a pin keeps (see `PruningMemory`), as of this commit.
    var rootsLeftBehind: Set<TransactionID> = []
    /// The snapshot pin counts of the tree this commit publishes, remembered once it is published.
    var publishedSnapshotRoots: (tree: PageReference, counts: [TransactionID: Int])?

    // Pages written by this transaction, by page number.
    @exclusivity(unchecked) var dirty: [PageID: DirtyPage] = [:]
    /// Tree and overflow pages of the user-visible trees written here: the introduced list.
    @exclusivity(unchecked) var introducedPages: Set<PageID> = []
    /// Pages written out before commit to keep memory bounded (see `spillIfNeeded`).
    @exclusivity(unchecked) var spilled: Set<PageID> = []
    /// Whether this transaction spilled any page: a page number it spilled and then freed may be
    /// handed out again in it, with the same birth, while the file still holds the spilled bytes.
    var hasSpilled = false
    /// Pages put into `dirty` as decoded leaves since decoded leaves were last encoded back into
    /// page bytes (see `spillIfNeeded`); a page may appear more than once.
    @exclusivity(unchecked) var leavesDecodedSinceEncoding: [PageID] = []
    /// Edits made through ``put(_:_:in:)``, ``delete(_:in:)`` and ``dropCollection(_:)``: a scan
    /// whose body edits stops reading the pages it was reading (see ``scan(_:range:reverse:_:)``).
    @exclusivity(unchecked) private var editCount = 0
    /// Committed pages of user-visible trees this transaction replaced: the deadlist entries.
    @exclusivity(unchecked) var invalidated: [PageReference] = []
    /// See ``TreeEditing/branchByteLayoutLimit``; tests set 0 to compare with decoded branches.
    var branchByteLayoutLimit = BTree.defaultBranchByteLayoutLimit

    /// The allocator's state; see `WriteTransaction+Allocation.swift`. Unchecked like `dirty`:
    /// taking and releasing a page touched it about 40 times a single-put commit, each check
    /// about 80 instructions with its end.
    @exclusivity(unchecked) var allocator: AllocatorState
    /// Packed-history edits; see `Packing.swift`. Unchecked like `allocator` (pruning's frees
    /// touch it three times a page). That is sound only while no `TreeEditing` callback of this
    /// transaction (`node`, `rawPage`, `setDirty`, `allocatePage`, `allocateCopy`, `takeFreePage`,
    /// `releasePage`) reads or writes `packWork`: `packWork.tree.put(_:_:editor: self)` holds a
    /// modify access to it for the whole edit, and an overlapping access would now corrupt it
    /// silently instead of trapping.
    @exclusivity(unchecked) var packWork: PackWork
    /// The group-commit epoch this transaction's base belongs to (see `GroupCommit`).
    var groupEpoch: UInt64 = 0
    /// Set by a commit that left packing to a packing commit (``HistoryPacking/inBackground``)
    /// when a batch is due at its head: its writer hands the gate to the packing thread.
    var leavesPackingDue = false
    private(set) var isFinished = false
    /// An edit failed part way; the transaction can only be aborted.
    private(set) var isPoisoned = false

    init(store: Store, base: StoreSnapshot, transaction: TransactionID, horizon: TransactionID, pinnedRoots: PinnedRoots) {
        self.store = store
        self.base = base
        self.transaction = transaction
        self.pageSize = store.pageFile.pageSize
        self.treeReader = SnapshotReader(pageFile: store.pageFile, pageCount: base.state.pageCount, packs: base.state.packs)
        self.catalogTree = BTree(root: base.head.catalog, owner: .history)
        self.allocator = AllocatorState(
            baseFreeTree: JournaledTree(root: base.state.freeTree, journal: base.state.journal.freeTree), horizon: horizon,
            nextPage: base.state.pageCount, pinnedRoots: pinnedRoots)
        self.packWork = PackWork(counters: base.state.packs, formatVersion: store.formatVersion, secureDelete: base.state.secureDelete)
    }

    // MARK: - Reading, with this transaction's edits visible

    var pageCount: UInt64 { allocator.nextPage }
    /// Reads see this transaction's own edits.
    var collectionReader: WriteTransaction { self }

    func node(_ reference: PageReference) throws -> NodeRead {
        if reference.birth == transaction, let page = dirty[reference.page] {
            switch page {
            case .leaf(let node): return .leaf(node)
            case .branch(let node): return .branch(node)
            // A node copied as bytes (backup, restore): its header already says what it holds.
            case .raw(let buffer, .leaf, _): return .leafPage(LeafView(page: buffer))
            case .raw(let buffer, .branch, _): return .branchPage(BranchView(page: buffer))
            case .raw: throw StoreError.malformedPage(page: reference.page, reason: "a tree points at a non-node page")
            }
        }
        // A finished transaction no longer holds its own pages (a large commit's decoded nodes are
        // freed once sealed, an aborted one's at once): reading them is an error, not damage.
        if reference.birth == transaction, isFinished { throw StoreError.transactionFinished }
        if reference.birth == transaction, spilled.contains(reference.page) {
            let page = try readSpilled(reference, kind: nil)
            return page.kindByte == PageKind.branch.rawValue ? .branchPage(BranchView(page: page)) : .leafPage(LeafView(page: page))
        }
        do {
            return try treeReader.node(reference)
        } catch let error as StoreError where error.isDamage {
            throw store.groupCommit.failure(since: groupEpoch) ?? error
        }
    }

    func rawPage(_ reference: PageReference, kind: PageKind) throws -> PageBuffer {
        if reference.birth == transaction, case .raw(let buffer, let dirtyKind, _)? = dirty[reference.page] {
            guard dirtyKind == kind else {
                throw StoreError.pageKindMismatch(page: reference.page, expected: kind, found: dirtyKind.rawValue)
            }
            return buffer
        }
        if reference.birth == transaction, isFinished { throw StoreError.transactionFinished }
        if reference.birth == transaction, spilled.contains(reference.page) { return try readSpilled(reference, kind: kind) }
        do {
            return try treeReader.rawPage(reference, kind: kind)
        } catch let error as StoreError where error.isDamage {
            throw store.groupCommit.failure(since: groupEpoch) ?? error
        }
    }

    /// A page this transaction wrote out early, read back (never through the shared cache: it
    /// is not committed).
    private func readSpilled(_ reference: PageReference, kind: PageKind?) throws -> PageBuffer {
        try store.pageFile.read(reference, kind: kind, pageCount: allocator.nextPage, cached: false)
    }

    func dirtyPage(_ page: PageID) -> DirtyPage? { dirty[page] }

    func setDirty(_ page: PageID, _ content: DirtyPage) {
        if case .raw(let buffer, let kind, let count) = content {
            // Readers of this transaction look at the header (kind, count, identity) before sealing.
            buffer.bytes.storeLittleEndian(kind.rawValue, at: PageHeader.kindOffset)
            buffer.bytes.storeLittleEndian(UInt16(count), at: PageHeader.countOffset)
            buffer.bytes.storeLittleEndian(page.rawValue, at: PageHeader.pageIDOffset)
            buffer.bytes.storeLittleEndian(transaction.rawValue, at: PageHeader.birthOffset)
        }
        if case .leaf = content { leavesDecodedSinceEncoding.append(page) }
        dirty[page] = content
    }

    func collectionEntry(_ name: [UInt8]) throws -> CollectionEntry? {
        if let state = collections[name] {
            return state.exists ? CollectionEntry(root: state.tree.root, count: state.count) : nil
        }
        return try catalogEntry(name)
    }

    package func collectionNames() throws -> [String] {
        var names = Set<[UInt8]>()
        try catalogTree.scan(.all, reverse: false, reader: self) { key, _ in
            names.insert(Array(key))
            return true
        }
        for (name, state) in collections.states {
            if state.exists { names.insert(name) } else { names.remove(name) }
        }
        return names.sorted { KeyOrder.compare($0, $1) < 0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: - Editing

    func checkActive() throws {
        if isFinished { throw StoreError.transactionFinished }
        if isPoisoned { throw StoreError.transactionFailed }
    }

    /// Runs an edit that may stop half way (a damaged page read in the middle of a copy on
    /// write); if it throws, the transaction's trees and page lists may disagree, so it can only
    /// be aborted.
    private func poisoningOnFailure<Result>(_ edit: () throws -> Result) throws -> Result {
        do {
            return try edit()
        } catch {
            isPoisoned = true
            throw error
        }
    }

    private func loadCollection(_ name: [UInt8]) throws -> CollectionState? {
        if let state = collections[name] { return state.exists ? state : nil }
        guard let entry = try catalogEntry(name) else { return nil }
        return CollectionState(tree: BTree(root: entry.root, owner: .history), count: entry.count, exists: true)
    }

    /// Stores `value` under `key` in `collection`, creating the collection if needed.
    /// - Throws: ``StoreError/keyTooLarge(byteCount:limit:)``, ``StoreError/emptyKey``,
    ///   ``StoreError/invalidCollectionName(_:)``, or an error reading a damaged page.
    package func put(_ key: [UInt8], _ value: [UInt8], in collection: String) throws {
        try checkActive()
        editCount += 1
        try spillIfNeeded()
        let name: [UInt8]
        var state: CollectionState
        if let remembered = collections.remembered(collection), remembered.state.exists {
            (name, state) = remembered
        } else {
            name = try CollectionEntry.validateName(collection)
            state = try loadCollection(name)
                ?? CollectionState(tree: BTree(root: .none, owner: .history), count: 0, exists: true)
        }
        try BTree.validateKey(key, pageSize: pageSize)
        let stored: LeafValue =
            NodeLayout.storesInline(keyCount: key.count, valueCount: value.count, pageSize: pageSize)
            ? .inline(value) : .overflow(try Overflow.write(value, owner: .history, editor: self))
        let previous = try poisoningOnFailure { try state.tree.put(key, stored, editor: self) }
        if let previous { try poisoningOnFailure { try releaseValue(previous) } } else { state.count += 1 }
        collections.update(collection, name: name, to: state)
    }

    /// Removes `key` from `collection`.
    /// - Returns: whether the key was there.
    @discardableResult
    package func delete(_ key: [UInt8], in collection: String) throws -> Bool {
        try checkActive()
        editCount += 1
        try spillIfNeeded()
        let name: [UInt8]
        let loaded: CollectionState?
        if let remembered = collections.remembered(collection) {
            (name, loaded) = (remembered.name, remembered.state.exists ? remembered.state : nil)
        } else {
            name = try CollectionEntry.validateName(collection)
            loaded = try loadCollection(name)
        }
        guard !key.isEmpty, var state = loaded,
            let removed = try poisoningOnFailure({ try state.tree.remove(key, editor: self) })
        else { return false }
        try poisoningOnFailure { try releaseValue(removed) }
        guard state.count > 0 else {
            throw StoreError.malformedPage(page: state.tree.root.page, reason: "collection count is zero with an entry in it")
        }
        state.count -= 1
        collections.update(collection, name: name, to: state)
        return true
    }

    /// Removes a whole collection and every page of its tree.
    /// - Returns: whether the collection existed.
    @discardableResult
    package func dropCollection(_ collection: String) throws -> Bool {
        try checkActive()
        editCount += 1
        let name = try CollectionEntry.validateName(collection)
        guard let state = try loadCollection(name) else { return false }
        var pages: [PageReference] = []
        try poisoningOnFailure { try TreePages.forEach(in: state.tree.root, reader: self) { reference, _ in pages.append(reference) } }
        for page in pages { releasePage(page, owner: .history) }
        collections[name] = CollectionState(tree: BTree(root: .none, owner: .history), count: 0, exists: false)
        return true
    }

    private func releaseValue(_ value: LeafValue) throws {
        if case .overflow(let reference) = value {
            try Overflow.release(reference, owner: .history, editor: self)
        }
    }

    /// Discards every edit. The transaction cannot be used afterwards.
    package func abort() {
        guard !isFinished else { return }
        isFinished = true
        dirty.removeAll()
        store.finishWrite()
    }

    func markFinished() { isFinished = true }

    /// Dirty pages from which a background thread frees a sealed commit's decoded nodes.
    static let backgroundReleaseThreshold = 1_024

    /// Once the commit is sealed, its decoded nodes are garbage: their keys and values are in the
    /// sealed pages. A large transaction holds hundreds of thousands of them (a bulk load of
    /// 100,000 records spent 9 % of its instructions freeing them when the transaction ended), so
    /// they are handed to a background thread and the commit goes on meanwhile.
    ///
    /// One release runs at a time: while one is in flight, the next large commit frees its own
    /// nodes here, so back-to-back bulk transactions cannot pile up several commits' nodes.
    func releaseDecodedPages() {
        guard dirty.count >= Self.backgroundReleaseThreshold else { return }
        guard DecodedPages.claimBackgroundRelease() else { return }
        let garbage = DecodedPages(dirty)
        dirty = [:]
        leavesDecodedSinceEncoding = []
        DispatchQueue.global(qos: .utility).async { garbage.release() }
    }

    /// Calls `body` with each entry of `collection` in `range`, as ``CollectionReading`` says.
    ///
    /// `body` may edit this transaction, the scanned collection included: the scan then acts as a
    /// cursor, going on from the key it last passed to `body` in the collection as edited, so it
    /// visits each key at most once, never one deleted before it got there, and a key put beyond
    /// its position when it gets there (a body that keeps putting keys ahead of the scan keeps it
    /// going). An edit can move entries between pages, merge leaves or edit a leaf's bytes in
    /// place, so the pages the scan was reading are left at once. Each restart costs a descent and
    /// the comparisons up to the position in its leaf: O(log n + entries in a leaf) per edit.
    package func scan(
        _ collection: String, range: KeyRange = .all, reverse: Bool = false,
        _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool
    ) throws {
        var remaining = range
        while true {
            let editsBefore = editCount
            var resumeAfter: [UInt8]?
            try scanEntries(collection, range: remaining, reverse: reverse) { key, value in
                guard try body(key, value) else { return false }
                if editCount != editsBefore {
                    resumeAfter = key
                    return false
                }
                return true
            }
            guard let key = resumeAfter else { return }
            if reverse { remaining.upper = KeyBound(key, inclusive: false) } else { remaining.lower = KeyBound(key, inclusive: false) }
        }
    }

    /// Replaces each leaf decoded since the last time that is still decoded by its page bytes,
    /// laid out as byte edits expect.
    private func encodeDecodedLeaves() {
        let pages = leavesDecodedSinceEncoding
        leavesDecodedSinceEncoding = []
        for page in pages {
            guard case .leaf(let node)? = dirty[page] else { continue }
            let buffer = PageBuffer(pageSize: pageSize)
            NodeLayout.encode(node, into: buffer)
            BTree.markLaidOut(buffer, edits: 0)
            setDirty(page, .raw(buffer, kind: .leaf, count: node.keys.count))
        }
    }

    /// Leaves decoded between two encodings back into bytes, once a transaction is large (see
    /// `spillIfNeeded`): a decoded leaf of small entries takes about 5 KiB, the same leaf as page
    /// bytes 4 KiB, and sealing a decoded leaf at commit another 4 KiB.
    static let decodedLeafLimit = 1_024

    /// Keeps a large transaction's memory bounded, in two steps.
    ///
    /// Once the transaction holds more than an eighth of `dirtyPageLimit` pages, every
    /// ``decodedLeafLimit`` leaves decoded since the last time that are still decoded are encoded
    /// back into page bytes, which further edits change in place as bytes (a leaf edited many
    /// more times is decoded again), and which commit seals without another copy. A bulk load of a
    /// million records then holds its tree as about 4 KiB a leaf rather than a decoded node and,
    /// at commit, its sealed copy. Smaller transactions keep their decoded leaves, which many
    /// edits of one leaf change faster.
    ///
    /// Past `dirtyPageLimit` pages, writes its leaf and large-value pages (not its branches) to their (free,
    /// uncommitted) places in the file and drops them from memory. A spilled page that is edited
    /// again is read back and copied like a committed one.
    ///
    /// Called between edits, when no tree operation holds a leaf or large value it will change.
    func spillIfNeeded() throws {
        if leavesDecodedSinceEncoding.count > Self.decodedLeafLimit, dirty.count > store.options.dirtyPageLimit / 8 {
            encodeDecodedLeaves()
        }
        guard dirty.count > store.options.dirtyPageLimit else { return }
        var pages: [PageBuffer] = []
        for (page, content) in dirty {
            switch content {
            // Branches stay: a branch is edited again by most puts below it, and a spilled one
            // would be read back, decoded and copied to another page.
            case .branch, .raw(_, .branch, _): continue
            case .leaf, .raw: pages.append(seal(page, content))
            }
        }
        // Set first: a write that fails part-way may have left some of them in the file.
        hasSpilled = hasSpilled || !pages.isEmpty
        try store.pageFile.write(pages)
        for page in pages {
            dirty.removeValue(forKey: page.pageID)
            spilled.insert(page.pageID)
        }
    }
}

/// A sealed commit's dirty pages on their way to a background thread.
/// `@unchecked Sendable`: after the hand-over nothing else reaches the nodes (the transaction
/// dropped its references and is finished), so the background thread is their only user.
private final class DecodedPages: @unchecked Sendable {
    private var pages: [PageID: DirtyPage]
    private static let lock = Lock()
    /// Guarded by `lock`: a background release is in flight (in this process, for any store).
    nonisolated(unsafe) private static var releasing = false

    init(_ pages: [PageID: DirtyPage]) { self.pages = pages }

    /// Whether the caller may start a background release (none is in flight); if so, it is.
    static func claimBackgroundRelease() -> Bool {
        lock.withLock {
            if releasing { return false }
            releasing = true
            return true
        }
    }

    func release() {
        pages = [:]
        Self.lock.withLock { Self.releasing = false }
    }
}
