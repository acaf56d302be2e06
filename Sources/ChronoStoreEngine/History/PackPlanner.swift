// Encoding a new root's pack entries on a background thread, while its commit syncs.

import Dispatch

/// Encodes, in the background, the pack entries that a root's dead list will get when packing
/// reaches it (Docs/RootChain.md, "Packed history"), so that the commit that packs the root
/// finds them ready instead of reading and delta-encoding each page itself.
///
/// A root leaves the packing window several commits after it is made, and then each page of its
/// dead list becomes a reverse delta against the page of its new list that took over its keys.
/// Both lists are fixed when the root is committed, and a page version never changes while it
/// exists, so the delta is known from then on. The committing thread hands the root's lists and
/// its sealed new pages to the planner, which encodes the deltas on another thread while the
/// commit's pages are written and synced; the packing step later takes the plan and uses an
/// entry where its own choice of base would be the plan's (the same new list), else it encodes
/// as before. A plan only saves work: a missing, dropped or mismatched plan changes nothing
/// packing writes.
///
/// Bounded: at most ``planLimit`` plans of at most ``pageLimit`` pages wait (the oldest roots'
/// plans are dropped first), holding at most ``byteLimit`` bytes of entries, and at most
/// ``jobLimit`` roots are being encoded at once; a root beyond those is encoded by its packing
/// step. Thread-safe.
final class PackPlanner: @unchecked Sendable {
    /// What the planner made of one page of a dead list.
    enum PlannedPage {
        /// Not a leaf or branch page: packing leaves it whole in its slot.
        case notTreePage
        /// The entry `makeEntry` gives with the base the root's new list offers, and whether
        /// the page is a leaf (its chain limit).
        case entry(PackEntry, isLeaf: Bool)
    }

    /// The planned entries of one root.
    struct Plan {
        /// The lists the plan was made from, as the root page records them.
        let dead: [PageReference]
        let new: [PageReference]
        var pages: [PageReference: PlannedPage]
        var byteCount: Int
    }

    private let lock = Lock()
    // Guarded by `lock`:
    private var plans: [TransactionID: Plan] = [:]
    private var plannedBytes = 0
    private var jobs = 0
    private var usedCount = 0
    private var submittedCount = 0

    private let queue = DispatchQueue(label: "ChronoStore.PackPlanner", qos: .utility)

    static let planLimit = 64
    static let pageLimit = 256
    static let byteLimit = 4 << 20
    static let jobLimit = 4

    /// Starts encoding the entries of root `root`, whose dead list is `dead` and whose new pages
    /// are `newPages` (sealed, in the new list's order), unless the planner is full. The dead
    /// pages are read through `pageFile` and verified; one that cannot be read is left to packing.
    func submit(
        root: TransactionID, dead: [PageReference], newPages: [PageBuffer], pageFile: PageFile, pageCount: UInt64
    ) {
        guard !dead.isEmpty, dead.count <= Self.pageLimit else { return }
        let admitted = lock.withLock {
            guard jobs < Self.jobLimit, plannedBytes < Self.byteLimit else { return false }
            jobs += 1
            submittedCount += 1
            return true
        }
        guard admitted else { return }
        let new = newPages.map { PageReference(page: $0.pageID, birth: $0.birth) }
        queue.async { [self] in
            let plan = Self.makePlan(dead: dead, new: new, newPages: newPages, pageFile: pageFile, pageCount: pageCount)
            lock.withLock {
                jobs -= 1
                plans[root] = plan
                plannedBytes += plan.byteCount
                while plans.count > Self.planLimit || plannedBytes > Self.byteLimit,
                    let oldest = plans.keys.min()
                {
                    plannedBytes -= plans.removeValue(forKey: oldest)?.byteCount ?? 0
                }
            }
        }
    }

    /// The plan for `root`, if one is ready; it is removed (each root is packed once).
    func take(_ root: TransactionID) -> Plan? {
        lock.withLock {
            guard let plan = plans.removeValue(forKey: root) else { return nil }
            plannedBytes -= plan.byteCount
            usedCount += 1
            return plan
        }
    }

    /// The plan for `root` without taking it (tests).
    func plan(for root: TransactionID) -> Plan? { lock.withLock { plans[root] } }

    /// Waits until every submitted root is encoded (tests).
    func waitUntilIdle() { queue.sync {} }

    /// Plans waiting to be taken.
    var planCount: Int { lock.withLock { plans.count } }

    /// Roots submitted and plans taken so far (tests and profiles).
    var counts: (submitted: Int, used: Int) { lock.withLock { (submittedCount, usedCount) } }

    private static func makePlan(
        dead: [PageReference], new: [PageReference], newPages: [PageBuffer], pageFile: PageFile, pageCount: UInt64
    ) -> Plan {
        let bases = BaseCandidates(newPages)
        var pages: [PageReference: PlannedPage] = [:]
        var byteCount = 0
        for reference in dead {
            // Uncached: a copy that no later reuse of the slot can change under the encoder.
            guard let page = try? pageFile.read(reference, kind: nil, pageCount: pageCount, cached: false) else { continue }
            guard page.kindByte == PageKind.leaf.rawValue || page.kindByte == PageKind.branch.rawValue else {
                pages[reference] = .notTreePage
                continue
            }
            let entry = PackEntry.make(page, base: bases.base(for: page), pageSize: pageFile.pageSize)
            pages[reference] = .entry(entry, isLeaf: page.kindByte == PageKind.leaf.rawValue)
            byteCount += entry.delta.count + 32
        }
        return Plan(dead: dead, new: new, pages: pages, byteCount: byteCount)
    }
}
