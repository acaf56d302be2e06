// A bounded cache of verified pages, shared by every transaction of one open store.

/// Keeps recently read pages in memory, up to a fixed number of pages.
///
/// Two generations approximate least-recently-used order at O(1) cost: hits in the older
/// generation move to the newer one, and when the newer one is full the older is dropped.
/// A cached page is only returned when its birth matches the reference asking for it, so a
/// page reused by a later commit (in this or another process) is never served stale.
/// `@unchecked Sendable`: both generations and the counters are guarded by `lock`. For the same
/// reason their run-time exclusivity checks are off (`@exclusivity(unchecked)`): every access
/// holds the lock, which already makes it exclusive (the checks cost more than the lookups).
package final class PageCache: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var newer: [PageID: PageBuffer] = [:]
    @exclusivity(unchecked) private var older: [PageID: PageBuffer] = [:]
    private let generationCapacity: Int
    @exclusivity(unchecked) private var hits = 0
    @exclusivity(unchecked) private var misses = 0

    /// Lookups that found their page, and lookups that did not.
    package var hitCount: Int { lock.withLock { hits } }
    package var missCount: Int { lock.withLock { misses } }

    /// A cache holding at most `pageCapacity` pages (at least 16).
    package init(pageCapacity: Int) {
        generationCapacity = max(8, pageCapacity / 2)
    }

    /// Pages the cache holds at most.
    package var pageCapacity: Int { generationCapacity * 2 }

    /// The cached copy of `reference`, if it is cached with that birth.
    package func page(_ reference: PageReference) -> PageBuffer? {
        lock.withLock {
            if let page = newer[reference.page], page.birth == reference.birth {
                hits += 1
                return page
            }
            if let page = older.removeValue(forKey: reference.page), page.birth == reference.birth {
                hits += 1
                insertLocked(page)
                return page
            }
            misses += 1
            return nil
        }
    }

    /// Caches a verified page, replacing any older copy of the same page number.
    package func insert(_ page: PageBuffer) {
        lock.withLock { insertLocked(page) }
    }

    private func insertLocked(_ page: PageBuffer) {
        if newer.count >= generationCapacity {
            older = newer
            newer = [:]
            newer.reserveCapacity(generationCapacity)
        }
        newer[page.pageID] = page
        older.removeValue(forKey: page.pageID)
    }

    /// Drops every cached page (after a reopen or a failure).
    package func removeAll() {
        lock.withLock {
            newer.removeAll()
            older.removeAll()
        }
    }

    /// How many pages are cached now.
    package var count: Int { lock.withLock { newer.count + older.count } }
}
