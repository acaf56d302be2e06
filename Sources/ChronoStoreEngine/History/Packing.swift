// Packing inside commits: old page versions become reverse deltas in pack pages; slots go back.

/// What one write transaction changes in packed history, applied at commit.
struct PackWork {
    /// The pack index as this transaction edits it.
    var tree: BTree
    var counters: PackCounters
    /// Entries to write at commit, by the page they rebuild.
    var pending: [PageReference: PackEntry] = [:]
    /// Encoded bytes of the entries packing walks added to `pending` (a running count).
    var pendingBytes = 0
    /// New chain lengths of hot pages that older versions are deltas against.
    var runs: [PageReference: ChainRun] = [:]
    /// Live entries and bytes each existing pack page loses.
    var lost: [PageID: (entries: UInt64, bytes: UInt64)] = [:]
    /// The versions packing walks of this transaction packed, whose slots they gave back (in the
    /// allocator's released pages): the only pending entries whose slot a rebase may take back.
    var packedHere: Set<PageReference> = []
    /// Packed pages whose entries compaction moved into `pending` (their index values still
    /// name the old pack page until commit).
    var repacked: Set<PageReference> = []
    /// Pack pages compaction copied in this transaction: old page → copy.
    var relocated: [PageID: PageID] = [:]
    /// Under secure delete: for entries packing walks added to `pending`, the depth of the root
    /// whose pruning frees them (its lineage child's dead list, and its own root page), so that
    /// `writePendingEntries` puts entries that die together in the same pack pages.
    var deaths: [PageReference: UInt64] = [:]
    /// Under secure delete: live entries of pack pages that lost others in this commit, which
    /// `repackSurvivorsOfSecureDelete` moved to `pending`, in the order it found them.
    var survivors: [PageReference: Int] = [:]

    /// The key order a new (empty) index takes: birth first from format version 3 on.
    let newIndexKeyOrder: PackIndex.KeyOrder
    /// Whether a new (empty) index's entries name their pages: from format version 5 on, in
    /// stores with secure delete (which pack only then).
    let newIndexNamesEntries: Bool

    init(counters: PackCounters, formatVersion: UInt32, secureDelete: Bool) {
        self.counters = counters
        self.tree = BTree(root: counters.index, owner: .system)
        newIndexKeyOrder = formatVersion >= 3 ? .birthFirst : .pageFirst
        newIndexNamesEntries = formatVersion >= 5 && secureDelete
        // An empty index may take either order and either entry form.
        if counters.index.isNone {
            self.counters.keyOrder = newIndexKeyOrder
            self.counters.namesEntries = newIndexNamesEntries
        }
    }
}

/// The longest chain of packed deltas ending at a hot page (a tag-2 value of the pack index).
struct ChainRun: Equatable {
    var length: Int
    /// The root whose dead list held the chain's oldest version; none when not recorded (values
    /// written before format version 3, and runs set to force a keyframe).
    var start: TransactionID

    static let empty = ChainRun(length: 0, start: .none)

    /// As long as any chain may be (``WriteTransaction/hardChainLimit``), so that the next
    /// version packed against the page is whole whatever its own run was.
    static let full = ChainRun(length: WriteTransaction.hardChainLimit, start: .none)

    /// The chain after a version that died in `deadIn`, with this chain ending at it, is packed
    /// as a delta against the page that replaced it.
    func extended(deadIn: TransactionID) -> ChainRun {
        ChainRun(length: length + 1, start: length > 0 ? start : deadIn)
    }

    /// The longer of two runs.
    static func longer(_ a: ChainRun, _ b: ChainRun) -> ChainRun { b.length > a.length ? b : a }
}

extension WriteTransaction {
    /// The pack-index key of `reference` in the index's order. (A method of `PackWork` called
    /// through this class's stored property copied the whole struct each call, about 550
    /// instructions, and packing takes several keys a page it packs or frees.)
    func packKey(_ reference: PageReference) -> [UInt8] { PackIndex.key(reference, order: packWork.counters.keyOrder) }

    /// Roots one packing walk visits at most below the window: a deeper backlog (history from
    /// before an upgrade, or from while packing was off) is left whole.
    static let packWalkLimit = 1024
    /// The store's packing settings, with the smaller batch of packing commits where they pack
    /// (``HistoryPacking/packingCommitBatchRoots``) and history is not limitless: there the
    /// pack's pages are most of the file, and walks of two or three roots leave them emptier
    /// (8,000 ten-update commits: 6,355 pack pages against 5,803, a file 6 % bigger), while
    /// under last-N retention the whole pages of roots waiting for a walk weigh more.
    var packing: HistoryPacking {
        var packing = store.options.packing
        if packsInPackingCommits, base.state.retention != .limitless {
            packing.batchRoots = min(packing.batchRoots, max(packing.packingCommitBatchRoots, 1))
        }
        return packing
    }
    /// Whether this store's format holds packed history (version 2 and later).
    var storesPacks: Bool { store.formatVersion >= 2 }
    /// Whether tag-2 values may carry a chain's start (version 3 and later).
    var storesChainStarts: Bool { store.formatVersion >= 3 }

    // MARK: - The packing step of a commit

    /// Packs the dead lists of the head's lineage ancestors that left the window, oldest first,
    /// within the commit's page budget. A walk happens once a batch of roots waits, so its cost
    /// is O(window + batch) index lookups per batch.
    func packHistory(_ trees: inout HistoryTrees, head: HistoryEntry) throws {
        guard packingIsDue(head: head) else { return }
        var counters = packWork.counters
        var newest = head
        var newestChild = head
        for _ in 0..<packing.window {
            guard newest.lineageParent != .none, let parent = try trees.entry(newest.lineageParent, reader: self) else {
                packWork.counters.depth = head.depth
                return
            }
            newestChild = newest
            newest = parent
        }
        // The root one lineage step newer than the walk's newest: its root page is the base of
        // the newest packed root page.
        let successor = newestChild
        var chain: [HistoryEntry] = []
        var next: HistoryEntry? = newest
        while let root = next, root.root > counters.cursor, chain.count < Self.packWalkLimit {
            chain.append(root)
            next = root.lineageParent == .none ? nil : try trees.entry(root.lineageParent, reader: self)
        }
        var budget = packing.pageBudget
        counters = packWork.counters
        counters.depth = newest.depth
        // Before each root: what to restore if the walk ends before it (see `rootsToKeep`). Only
        // a walk of about a batch is trimmed: a backlog (after an upgrade, or packing turned back
        // on) would copy its growing pending entries at every root.
        let trims = chain.count <= packing.batchRoots + 2 * packing.window
        var before: [(work: PackWork, released: Int)] = []
        var rootBytes: [Int] = []
        let bytesBefore = packWork.pending.reduce(0) { $0 + packedByteCount($1.value, $1.key) }
        var finished = true
        for index in chain.indices.reversed() {
            guard budget > 0 else {
                // Resume at the next commit.
                counters.depth = 0
                finished = false
                break
            }
            let root = chain[index]
            if trims { before.append((packWork, allocator.released.count)) }
            let bytes = packWork.pendingBytes
            budget -= try pack(root, successor: index > 0 ? chain[index - 1] : successor)
            rootBytes.append(packWork.pendingBytes - bytes)
            counters.cursor = max(counters.cursor, root.root)
        }
        if finished, trims, !rootBytes.isEmpty {
            let capacity = PackPage.capacity(pageSize: pageSize)
            let kept = Self.rootsToKeep(pendingBefore: bytesBefore, rootBytes: rootBytes, capacity: capacity)
            if kept < rootBytes.count {
                // The roots after the kept ones wait for the next walk, which starts with them.
                packWork = before[kept].work
                allocator.released.removeSubrange(before[kept].released...)
                let newestKept = chain[chain.count - kept]
                counters.cursor = newestKept.root
                counters.depth = newestKept.depth
            }
            counters.depth += UInt64(Self.extraBatchRoots(
                walkBytes: rootBytes.prefix(kept).reduce(0, +), roots: kept, capacity: capacity, packing: packing))
        }
        packWork.counters.cursor = counters.cursor
        packWork.counters.depth = counters.depth
    }

    /// Whether a packing walk is due at a commit whose head is `head`: a batch of roots beyond the
    /// window waits, or the head moved back past the packed roots.
    func packingIsDue(head: HistoryEntry) -> Bool {
        // Secure delete promises no byte of a freed page survives: a store with it packs only
        // into named entries, whose pack pages `repackSurvivors` can rewrite without the freed ones.
        guard storesPacks, packing.isEnabled, !base.state.secureDelete || packWork.counters.namesEntries else { return false }
        let counters = packWork.counters
        // The depth hint is the newest packed root's depth plus the roots the next walk waits for
        // beyond the batch (at most `extraBatchLimit`): a head below it by more than that moved
        // back (an undo past the packed roots), and packing starts over from it at once.
        // Saturating: depths come from the file, and a damaged one must not trap.
        func plus(_ depth: UInt64, _ count: Int) -> UInt64 {
            let (sum, overflow) = depth.addingReportingOverflow(UInt64(count))
            return overflow ? .max : sum
        }
        return head.depth >= plus(counters.depth, packing.window + packing.batchRoots)
            || plus(head.depth, Self.extraBatchLimit) < counters.depth
    }

    /// Whether this transaction's commit leaves packing to a packing commit built after it
    /// (``HistoryPacking/inBackground``): durable commits that join groups, which are all durable
    /// commits but those of stores with secure delete.
    var packsInPackingCommits: Bool {
        store.options.packing.inBackground && store.options.durability == .durable && !base.state.secureDelete
    }

    /// How many of a walk's roots (oldest first, each adding `rootBytes[i]` bytes of entries to
    /// the `pendingBefore` already pending) stay packed: all of them when the commit's pack
    /// pages come out at least 90 % full; else the prefix whose pages come out fullest, when
    /// that is at least 75 %; else all. A root left out is packed by the next walk, so pack
    /// pages fill up instead of each walk leaving a half-empty last page (small commits: a
    /// walk's roots fill 60 to 80 % of a page).
    static func rootsToKeep(pendingBefore: Int, rootBytes: [Int], capacity: Int) -> Int {
        func fill(_ bytes: Int) -> Double { packPageFill(Double(bytes), capacity: capacity) }
        var total = pendingBefore + rootBytes.reduce(0, +)
        if fill(total) >= 0.9 { return rootBytes.count }
        var best = (kept: rootBytes.count, fill: fill(total))
        for kept in stride(from: rootBytes.count - 1, through: 1, by: -1) {
            total -= rootBytes[kept]
            if total > 0, fill(total) > best.fill + 0.01 { best = (kept, fill(total)) }
        }
        return best.fill >= 0.75 ? best.kept : rootBytes.count
    }

    /// Roots beyond `batchRoots` the next walk waits for, so that when roots pack small (a
    /// single put's root packs to about 400 bytes) one walk fills a pack page. At most
    /// ``extraBatchLimit``, which `packHistory` allows for when it tells a head that moved back.
    ///
    /// A batch that fills only a page or two (packing commits pack two roots at a time) would
    /// leave much of its last page empty, and a walk of so few roots has no shorter prefix that
    /// fills its pages better (`rootsToKeep`): it waits for one more root when that fills the
    /// pages better. Ten-update roots of limitless history pack to about 2.6 KB: two fill 4 KiB
    /// pages to 64 %, three to 96 %. Only one: a root waiting keeps its replaced pages whole,
    /// and under last-N retention, where roots pack smaller, waiting for the fullest walk (up
    /// to five roots) made the last-100 file 16 % bigger instead of smaller.
    static func extraBatchRoots(walkBytes: Int, roots: Int, capacity: Int, packing: HistoryPacking) -> Int {
        guard roots > 0, walkBytes > 0 else { return 0 }
        let perRoot = Double(walkBytes) / Double(roots)
        let perPage = Int(Double(capacity) * 0.95 / perRoot)
        let extra = max(perPage - packing.batchRoots, 0)
        if extra == 0, perRoot * Double(packing.batchRoots) <= 2 * Double(capacity) {
            let batch = packPageFill(perRoot * Double(packing.batchRoots), capacity: capacity)
            let oneMore = packPageFill(perRoot * Double(packing.batchRoots + 1), capacity: capacity)
            return batch < 0.9 && oneMore > batch + 0.01 ? 1 : 0
        }
        return min(extra, extraBatchLimit)
    }

    /// How full the pack pages holding `bytes` of entries come out: placement is first fit,
    /// largest first, so pages come out nearly full but for the last.
    static func packPageFill(_ bytes: Double, capacity: Int) -> Double {
        let pages = (bytes / (Double(capacity) * 0.97)).rounded(.up)
        return pages > 0 ? bytes / (pages * Double(capacity)) : 1
    }

    /// The most roots a walk waits for beyond the batch (their replaced pages stay whole
    /// meanwhile: about 12 single-put roots, 50 KB).
    static let extraBatchLimit = 12

    /// Packs one root's dead list and its root page (a delta against the root page of
    /// `successor`, its lineage child on the head's path). Returns how many pages it packed.
    private func pack(_ root: HistoryEntry, successor: HistoryEntry) throws -> Int {
        let dead = try deadList(of: root)
        guard !dead.isEmpty || root.deadListIsRootOwned else { return 0 }
        let bases = try BaseCandidates(try newList(of: root), reader: treeReader)
        var packed = 0
        // The dead list holds versions its lineage parent reached: they are freed when that parent
        // is pruned, together with the parent's root page.
        let deadListDies = root.depth > 0 ? root.depth - 1 : 0
        for reference in dead where try packPage(reference, bases: bases, deadIn: root.root, dies: deadListDies) { packed += 1 }
        if root.deadListIsRootOwned, root.newListIsRootOwned,
            try packRootPage(root.rootPage, successor: successor.rootPage, dies: root.depth)
        {
            packed += 1
        }
        return packed
    }

    /// The chain of deltas ending at hot page `reference` (0 when none), or nil when it is packed
    /// already (in this commit or before).
    private func chainToPack(_ reference: PageReference) throws -> ChainRun? {
        guard packWork.pending[reference] == nil else { return nil }
        if let run = packWork.runs[reference] { return run }
        guard !packWork.tree.root.isNone, let value = try packWork.tree.lookup(packKey(reference), reader: self) else { return .empty }
        switch try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth) {
        case .packed: return nil
        case .run(let count, let start): return ChainRun(length: count, start: start)
        case .directory: throw StoreError.malformedPage(page: packWork.tree.root.page, reason: "pack index key names a pack page")
        }
    }

    /// Packs one hot page as a delta against its replacement (or whole), unless it is already
    /// packed or is not a tree page.
    private func packPage(_ reference: PageReference, bases: BaseCandidates, deadIn: TransactionID, dies: UInt64) throws -> Bool {
        guard let chain = try chainToPack(reference) else { return false }
        let page = try treeReader.read(reference, kind: nil, cached: false)
        let isLeaf = page.kindByte == PageKind.leaf.rawValue
        guard isLeaf || page.kindByte == PageKind.branch.rawValue else { return false }
        let chainLimit = isLeaf ? packing.leafChainLimit : packing.branchChainLimit
        let base = allowsDelta(after: chain, limit: chainLimit, deadIn: deadIn) ? bases.base(for: page) : nil
        let entry = makeEntry(page, base: base)
        // A delta whose page would not fit a pack page whole is still packed: if its base is
        // freed first, `rebaseDependants` rebases it onto the page that took over its keys.
        guard packedByteCount(entry, reference) <= PackPage.capacity(pageSize: pageSize) else { return false }
        if !entry.base.isNone {
            packWork.runs[entry.base] = ChainRun.longer(try runLength(of: entry.base), chain.extended(deadIn: deadIn))
        }
        packWork.runs[reference] = nil
        packWork.pending[reference] = entry
        packWork.pendingBytes += packedByteCount(entry, reference)
        if placesByDeath { packWork.deaths[reference] = dies }
        allocator.released.append(reference.page)
        packWork.packedHere.insert(reference)
        return true
    }

    /// Whether a version that died in `deadIn`, with `chain` ending at it, may be packed as a
    /// delta (else it is a keyframe): when the chain's versions that retention still keeps
    /// (``retainedLength(of:deadIn:)``) stay within `limit`, and the whole chain, dropped
    /// versions included, within ``hardChainLimit``. Pruning frees a chain's oldest
    /// versions, so under last-N retention a chain of 48 packed versions may hold only the
    /// newest few: a keyframe every `limit` versions would then cost bytes (about a quarter of
    /// last-1,000 history at quick scale) and buy nothing.
    func allowsDelta(after chain: ChainRun, limit: Int, deadIn: TransactionID) -> Bool {
        Self.allowsDelta(after: chain, limit: limit, deadIn: deadIn, tail: base.state.tail)
    }

    static func allowsDelta(after chain: ChainRun, limit: Int, deadIn: TransactionID, tail: TransactionID) -> Bool {
        chain.length + 1 <= hardChainLimit && retainedLength(of: chain, deadIn: deadIn, tail: tail) + 1 <= limit
    }

    /// The longest chain, counting versions already dropped, a delta may end (every chain limit
    /// is at most this). Rebuilding a page applies at most this many deltas, plus one where
    /// rebasing made a packed page with its own chain a delta against a hot page (whose run is
    /// then ``ChainRun/full``): within the reader's 256.
    static let hardChainLimit = 250

    /// Of `chain`, the versions retention has not dropped, estimated: they died between the
    /// chain's start and `deadIn`, and those that died before the tail (the oldest retained
    /// root) are gone, assuming they died evenly spread. The whole chain when its start is not
    /// recorded or nothing after it was pruned.
    static func retainedLength(of chain: ChainRun, deadIn: TransactionID, tail: TransactionID) -> Int {
        guard chain.length > 0, chain.start != .none, tail > chain.start, deadIn > chain.start else { return chain.length }
        guard tail < deadIn else { return 0 }
        let kept = Double(deadIn.rawValue - tail.rawValue) / Double(deadIn.rawValue - chain.start.rawValue)
        return min(chain.length, Int((Double(chain.length) * kept).rounded(.up)))
    }

    /// Root pages whose two lists hold more entries than this are packed whole: a delta saves a
    /// third of the bytes either way (single put: 89 B against 131 B whole; ten updates: 258 B
    /// against 374 B), but encoding one costs about 4 times a keyframe once the lists are long
    /// (their sorted entries interleave with the base's), 2 % of such a commit's bytes for 12 %
    /// more packing work.
    static let rootDeltaListLimit: UInt64 = 24

    /// Packs a root page as a delta against the root page of its lineage child `successor`
    /// (the child's introduced list is mostly this root's dead list's successors, and its dead
    /// list this root's introduced list), or whole once `rootChainLimit` deltas would end at it.
    /// Its record and lists are read through the pack afterwards. A successor that is dropped
    /// while this root stays rewrites this entry as a keyframe first (`rebaseRootDependant`).
    private func packRootPage(_ reference: PageReference, successor: PageReference, dies: UInt64) throws -> Bool {
        guard let chain = try chainToPack(reference) else { return false }
        let page = try treeReader.read(reference, kind: .root, cached: false)
        let listEntries = page.readOnly.loadLittleEndian(at: RootRecord.invalidatedOffset, as: UInt64.self)
            &+ page.readOnly.loadLittleEndian(at: RootRecord.introducedOffset, as: UInt64.self)
        // A root page "dies" when its lineage child is made: the child's id stands for its death.
        let deadIn = successor.birth
        let base = allowsDelta(after: chain, limit: packing.rootChainLimit, deadIn: deadIn) && successor != reference
            && listEntries <= Self.rootDeltaListLimit
            ? try treeReader.read(successor, kind: .root, cached: false) : nil
        let entry = makeEntry(page, base: base)
        guard packedByteCount(entry, reference) <= PackPage.capacity(pageSize: pageSize) else { return false }
        if !entry.base.isNone {
            packWork.runs[entry.base] = ChainRun.longer(try runLength(of: entry.base), chain.extended(deadIn: deadIn))
        }
        packWork.runs[reference] = nil
        packWork.pending[reference] = entry
        packWork.pendingBytes += packedByteCount(entry, reference)
        if placesByDeath { packWork.deaths[reference] = dies }
        allocator.released.append(reference.page)
        packWork.packedHere.insert(reference)
        return true
    }

    /// Whether pack pages are filled by when their entries will be freed (secure delete, whose
    /// commits rewrite what a pack page still holds once some of its entries are freed) rather
    /// than largest first.
    var placesByDeath: Bool { base.state.secureDelete && packWork.counters.namesEntries }

    /// The bytes `entry`, the version `reference`, takes in a pack page of this store.
    func packedByteCount(_ entry: PackEntry, _ reference: PageReference) -> Int {
        entry.encodedByteCount(for: reference, named: packWork.counters.namesEntries)
    }

    func makeEntry(_ page: PageBuffer, base: PageBuffer?) -> PackEntry {
        guard let base else { return PackEntry.keyframe(of: page) }
        let checksum: UInt32 = page.readOnly.loadLittleEndian(at: PageHeader.checksumOffset)
        let delta = PageDelta.encode(PackBlanking.blanked(page), base: PackBlanking.blanked(base))
        let entry = PackEntry(base: base.reference, checksum: checksum, delta: delta)
        if entry.delta.count > pageSize / 4 {
            let whole = PackEntry.keyframe(of: page)
            if whole.delta.count <= entry.delta.count { return whole }
        }
        return entry
    }

    /// The longest chain of deltas ending at hot page `reference`, as this transaction sees it.
    func runLength(of reference: PageReference) throws -> ChainRun {
        if let run = packWork.runs[reference] { return run }
        guard !packWork.tree.root.isNone, let value = try packWork.tree.lookup(packKey(reference), reader: self),
            case .run(let count, let start) = try PackIndex.decode(value, page: packWork.tree.root.page, owner: reference.birth)
        else { return .empty }
        return ChainRun(length: count, start: start)
    }
}

/// The leaf and branch pages a root wrote, by kind and first key: where a delta's base is found.
///
/// A dead page's base is the page of the same kind whose first key is the greatest not above the
/// dead page's first key (the page that took over its key range), else the one with the smallest
/// first key. Any page would rebuild correctly; this choice makes the delta small. Every
/// candidate is born in the root whose dead list is packed, which pruning relies on (a base is
/// freed only with that root's new list; see `rebaseDependants`).
struct BaseCandidates {
    private var leaves: [([UInt8], PageBuffer)] = []
    private var branches: [([UInt8], PageBuffer)] = []

    init(_ introduced: [PageReference], reader: SnapshotReader) throws {
        for reference in introduced {
            let page = try reader.read(reference, kind: nil, cached: true)
            if page.kindByte == PageKind.leaf.rawValue {
                let view = LeafView(page: page)
                leaves.append((view.count > 0 ? Array(view.key(at: 0)) : [], page))
            } else if page.kindByte == PageKind.branch.rawValue {
                let view = BranchView(page: page)
                branches.append((view.keyCount > 0 ? Array(view.key(at: 0)) : [], page))
            }
        }
        leaves.sort { KeyOrder.compare($0.0, $1.0) < 0 }
        branches.sort { KeyOrder.compare($0.0, $1.0) < 0 }
    }

    func base(for page: PageBuffer) -> PageBuffer? {
        let isLeaf = page.kindByte == PageKind.leaf.rawValue
        let candidates = isLeaf ? leaves : branches
        guard let first = candidates.first else { return nil }
        let key: [UInt8]
        if isLeaf {
            let view = LeafView(page: page)
            key = view.count > 0 ? Array(view.key(at: 0)) : []
        } else {
            let view = BranchView(page: page)
            key = view.keyCount > 0 ? Array(view.key(at: 0)) : []
        }
        var chosen = first.1
        for (candidateKey, candidate) in candidates {
            guard KeyOrder.compare(candidateKey, key) <= 0 else { break }
            chosen = candidate
        }
        return chosen
    }
}
