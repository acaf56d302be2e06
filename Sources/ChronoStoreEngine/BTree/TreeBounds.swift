// Limits every descent into a tree obeys, so a crafted page cannot make a walk endless or wrong.

/// The key interval a node must keep to, derived from the separators above it: every key in
/// the subtree lies in `[lower, upper)`; a missing bound is open.
///
/// Descents that visit many pages (scans, verification) check each node against its interval.
/// A page reached through two different parents, or through itself, then breaks an interval
/// unless it holds no keys at all, so damage of that shape cannot multiply the work.
struct KeyInterval {
    var lower: [UInt8]?
    var upper: [UInt8]?

    static let all = KeyInterval()

    /// The most levels a tree can have. Creating a level takes a root split, which needs at least
    /// twice as many leaves as the level below did, so 64 levels would need more than 2^63
    /// pages: a deeper descent can only come from a cycle.
    static let maximumDepth = 64

    /// Checks that a descent from the root has not gone deeper than any tree can be.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming `page`.
    static func checkDepth(_ depth: Int, page: PageID) throws {
        guard depth < maximumDepth else {
            throw StoreError.malformedPage(page: page, reason: "tree is deeper than \(maximumDepth) levels (a page cycle)")
        }
    }

    func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        if let lower, KeyOrder.compare(key, lower) < 0 { return false }
        if let upper, KeyOrder.compare(key, upper) >= 0 { return false }
        return true
    }

    /// The interval of child `index` of a branch page.
    func child(_ index: Int, of view: BranchView) -> KeyInterval {
        KeyInterval(
            lower: index == 0 ? lower : Array(view.key(at: index - 1)),
            upper: index == view.keyCount ? upper : Array(view.key(at: index)))
    }

    /// The interval of child `index` of a branch this transaction is editing.
    func child(_ index: Int, of node: BranchNode) -> KeyInterval {
        KeyInterval(
            lower: index == 0 ? lower : node.keys[index - 1],
            upper: index == node.keys.count ? upper : node.keys[index])
    }

    /// Checks a leaf or branch page's keys (already in order within the page, see
    /// ``NodeLayout/validate(_:kind:)``) against this interval.
    /// - Throws: ``StoreError/malformedPage(page:reason:)`` naming the page.
    func check(_ node: NodeRead, page: PageID) throws {
        let first: UnsafeRawBufferPointer?
        let last: UnsafeRawBufferPointer?
        switch node {
        case .leafPage(let view):
            guard view.count > 0 else { return }
            (first, last) = (view.key(at: 0), view.key(at: view.count - 1))
        case .branchPage(let view):
            guard view.keyCount > 0 else { return }
            (first, last) = (view.key(at: 0), view.key(at: view.keyCount - 1))
        case .leaf, .branch:
            // Nodes this transaction built in memory are correct by construction.
            return
        }
        guard let first, let last, contains(first), contains(last) else {
            throw StoreError.malformedPage(page: page, reason: "keys lie outside the separators of the parent branch")
        }
    }
}
