// Pages of registered group-commit members that their group's leader has not written yet.

import ChronoAtomics

/// Sealed pages of durable commits that joined a group (see `GroupCommit`) and are not in the
/// file yet: the group's leader writes them all, in runs, right before its header slot, instead
/// of each writer writing its own while it holds the writer gate.
///
/// Until then every read of this process finds them here, as if they were already in the file:
/// the next writer builds on a registered commit at once. Nobody else can ask for them: another
/// process sees no state naming them until the group's slot is written (after these pages), and
/// a page staged here is one no published state reaches (a commit reuses only pages whose release
/// is synced, and pages released by registered commits are not reused until their group is
/// synced), so its file bytes were garbage to every reader anyway.
///
/// `@unchecked Sendable`: `pages`, `releases` and `alwaysWritten` are guarded by `lock`; `count`
/// is only touched atomically. The lock already keeps their accesses apart, so they skip the
/// run-time exclusivity checks (about 80 instructions a read of a page: every read asks here
/// while a group commit is in flight).
final class StagedPages: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var pages: [PageID: PageBuffer] = [:]
    /// The pages each staged commit released: a staged page a later member of the same group
    /// released is no part of the group's end state, and is not written at all.
    @exclusivity(unchecked) private var releases: [(transaction: TransactionID, pages: [PageID])] = []
    /// Staged pages written even when a later member released them: those of a transaction that
    /// spilled, whose slots may hold bytes it spilled there with the same page number and birth.
    @exclusivity(unchecked) private var alwaysWritten: Set<PageID> = []
    /// How many pages are staged: every page read loads it, and takes the lock only when it is
    /// not zero (while group commits are in flight).
    private let count = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)

    init() { count.initialize(to: 0) }

    deinit { count.deallocate() }

    /// The staged page at `page`, if any.
    func page(_ page: PageID) -> PageBuffer? {
        guard chrono_atomic_load(count) != 0 else { return nil }
        return lock.withLock { pages[page] }
    }

    /// Whether no page is staged.
    var isEmpty: Bool { chrono_atomic_load(count) == 0 }

    /// Stages the pages of commit `transaction`, and the pages it released. With `spilled` (the
    /// transaction wrote pages to the file before its commit) they are written even when a
    /// later member releases them: a stale spilled copy with the same number and birth must not
    /// stay in their slots.
    func stage(_ buffers: [PageBuffer], released: [PageID], by transaction: TransactionID, spilled: Bool) {
        lock.withLock {
            for buffer in buffers { pages[buffer.pageID] = buffer }
            if spilled { alwaysWritten.formUnion(buffers.lazy.map(\.pageID)) }
            if !released.isEmpty { releases.append((transaction, released)) }
            chrono_atomic_store(count, UInt64(pages.count))
        }
    }

    /// The staged pages born at or before `transaction` (the commits of a group ending there):
    /// those the group's end state still reaches (`live`), and those a member released after
    /// an earlier one wrote them (`dead`: freed before the group's end, never needed on disk).
    func pages(bornThrough transaction: TransactionID) -> (live: [PageBuffer], dead: [PageBuffer]) {
        lock.withLock {
            // Only a later member can release a staged page (a commit's own pages go back to it
            // as recycled, never into its released list), so pages born at or after the newest
            // release are live without a look: a group of one commit builds no set at all (its
            // released pages, free-tree churn included, were about 6 k instructions a commit).
            var newestRelease = TransactionID.none
            for release in releases where release.transaction <= transaction {
                newestRelease = max(newestRelease, release.transaction)
            }
            var released: Set<PageID>?
            var live: [PageBuffer] = []
            var dead: [PageBuffer] = []
            for page in pages.values where page.birth <= transaction {
                guard page.birth < newestRelease else {
                    live.append(page)
                    continue
                }
                if released == nil {
                    var set = Set<PageID>()
                    for release in releases where release.transaction <= transaction { set.formUnion(release.pages) }
                    released = set
                }
                if released!.contains(page.pageID) && !alwaysWritten.contains(page.pageID) {
                    dead.append(page)
                } else {
                    live.append(page)
                }
            }
            releases.removeAll { $0.transaction <= transaction }
            return (live, dead)
        }
    }

    /// Takes the pages and releases of commit `transaction` off the stage: it failed before it
    /// registered, so nothing builds on it.
    func remove(_ buffers: [PageBuffer], of transaction: TransactionID) {
        lock.withLock {
            releases.removeAll { $0.transaction == transaction }
            forgetLocked(buffers)
        }
    }

    /// Forgets `written`, now in the file (or dead), unless a later commit staged the same page number since.
    func forget(_ written: [PageBuffer]) {
        lock.withLock { forgetLocked(written) }
    }

    private func forgetLocked(_ buffers: [PageBuffer]) {
        for buffer in buffers where pages[buffer.pageID] === buffer {
            pages[buffer.pageID] = nil
            alwaysWritten.remove(buffer.pageID)
        }
        chrono_atomic_store(count, UInt64(pages.count))
    }

    /// Forgets every staged page (those of commits that failed: nothing builds on them, and the
    /// page numbers are free in the published state, so another process may reuse them).
    func removeAll() {
        guard chrono_atomic_load(count) != 0 else { return }
        lock.withLock {
            pages.removeAll()
            releases.removeAll()
            alwaysWritten.removeAll()
            chrono_atomic_store(count, 0)
        }
    }
}
