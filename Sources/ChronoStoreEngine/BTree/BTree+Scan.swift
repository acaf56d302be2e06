// Ordered range scans in either direction, with inclusive, exclusive or open bounds.

/// One end of a key range.
package struct KeyBound: Equatable, Sendable {
    package var key: [UInt8]
    package var isInclusive: Bool
    package init(_ key: [UInt8], inclusive: Bool) {
        self.key = key
        self.isInclusive = inclusive
    }
}

/// A range of keys; a missing bound is open.
package struct KeyRange: Equatable, Sendable {
    package var lower: KeyBound?
    package var upper: KeyBound?
    package init(lower: KeyBound? = nil, upper: KeyBound? = nil) {
        self.lower = lower
        self.upper = upper
    }
    package static let all = KeyRange()

    func admits(_ key: UnsafeRawBufferPointer) -> Bool {
        if let lower {
            let order = KeyOrder.compare(key, lower.key)
            if order < 0 || (order == 0 && !lower.isInclusive) { return false }
        }
        if let upper {
            let order = KeyOrder.compare(key, upper.key)
            if order > 0 || (order == 0 && !upper.isInclusive) { return false }
        }
        return true
    }
}

extension BTree {
    /// Calls `body` with each entry in `range`, in key order (descending when `reverse`),
    /// until it returns false.
    ///
    /// The descent is bounded by ``KeyInterval/maximumDepth`` and checks every node against the
    /// separators above it, so a damaged tree (a cycle, a page reached twice, keys out of order)
    /// ends the scan with an error instead of looping or repeating entries.
    /// `body` must not edit this tree through `reader` (a write transaction): an edit can change
    /// a leaf the scan is reading in place, or move its entries. Collect what to change, then edit
    /// after the scan, as the engine's own scans do; `WriteTransaction.scan` instead starts again
    /// past the last key after a body that edited.
    /// - Returns: false when `body` stopped the scan.
    /// - Throws: a damage ``StoreError`` naming the page, or what `body` throws.
    @discardableResult
    func scan(
        _ range: KeyRange, reverse: Bool, reader: some TreeReading,
        _ body: (UnsafeRawBufferPointer, LeafValue) throws -> Bool
    ) throws -> Bool {
        guard !root.isNone else { return true }
        return try visit(root, range, reverse, reader, .all, depth: 0, body)
    }

    private func visit(
        _ reference: PageReference, _ range: KeyRange, _ reverse: Bool, _ reader: some TreeReading,
        _ interval: KeyInterval, depth: Int, _ body: (UnsafeRawBufferPointer, LeafValue) throws -> Bool
    ) throws -> Bool {
        try KeyInterval.checkDepth(depth, page: reference.page)
        let node = try reader.node(reference)
        try interval.check(node, page: reference.page)
        switch node {
        case .leafPage(let view):
            for index in Self.order(0..<view.count, reverse) {
                let key = view.key(at: index)
                if !range.admits(key) {
                    if Self.isPastEnd(key, range, reverse) { return false }
                    continue
                }
                if try !body(key, view.value(at: index)) { return false }
            }
        case .leaf(let node):
            // Local copies: no access to the node's stored arrays stays open across `body`, so
            // the compiler can check their exclusivity statically (see `BTree.search`).
            let keys = node.keys
            let values = node.values
            for index in Self.order(0..<keys.count, reverse) {
                let keep = try keys[index].withUnsafeBytes { key -> Bool? in
                    if !range.admits(key) { return Self.isPastEnd(key, range, reverse) ? false : nil }
                    return try body(key, values[index])
                }
                if keep == false { return false }
            }
        case .branchPage(let view):
            let (first, last) = childSpan(range, count: view.keyCount + 1) { key in view.childIndex(for: key) }
            for index in Self.order(first..<(last + 1), reverse) {
                let child = interval.child(index, of: view)
                if try !visit(view.child(at: index), range, reverse, reader, child, depth: depth + 1, body) { return false }
            }
        case .branch(let node):
            let (first, last) = childSpan(range, count: node.children.count) { key in Self.childIndex(in: node, for: key) }
            for index in Self.order(first..<(last + 1), reverse) {
                let child = interval.child(index, of: node)
                if try !visit(node.children[index], range, reverse, reader, child, depth: depth + 1, body) { return false }
            }
        }
        return true
    }

    /// The children whose key ranges can intersect `range`.
    private func childSpan(
        _ range: KeyRange, count: Int, _ childIndex: (UnsafeRawBufferPointer) -> Int
    ) -> (Int, Int) {
        let first = range.lower.map { bound in bound.key.withUnsafeBytes { childIndex($0) } } ?? 0
        let last = range.upper.map { bound in bound.key.withUnsafeBytes { childIndex($0) } } ?? count - 1
        return (first, max(first, last))
    }

    /// Whether `key`, outside the range, lies beyond the end the scan is heading towards.
    private static func isPastEnd(_ key: UnsafeRawBufferPointer, _ range: KeyRange, _ reverse: Bool) -> Bool {
        if reverse {
            guard let lower = range.lower else { return false }
            let order = KeyOrder.compare(key, lower.key)
            return order < 0 || (order == 0 && !lower.isInclusive)
        }
        guard let upper = range.upper else { return false }
        let order = KeyOrder.compare(key, upper.key)
        return order > 0 || (order == 0 && !upper.isInclusive)
    }

    private static func order(_ range: Range<Int>, _ reverse: Bool) -> [Int] {
        reverse ? Array(range.reversed()) : Array(range)
    }
}
