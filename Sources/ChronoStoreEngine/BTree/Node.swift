// Mutable B+tree nodes: what a write transaction edits before the nodes are sealed into pages.

/// A large value stored outside the leaf: its overflow index page and total length.
package struct OverflowReference: Equatable, Sendable {
    package var index: PageReference
    package var length: UInt64
    package static let byteCount = PageReference.byteCount + 8
}

/// A value as a leaf holds it.
package enum LeafValue: Equatable, Sendable {
    case inline([UInt8])
    case overflow(OverflowReference)

    /// Bytes this value occupies in a leaf entry (after the entry's fixed part).
    var encodedByteCount: Int {
        switch self {
        case .inline(let bytes): bytes.count
        case .overflow: OverflowReference.byteCount
        }
    }
}

/// A leaf being edited: parallel arrays of sorted keys and their values.
///
/// `@exclusivity(unchecked)` on the stored properties: a node belongs to one write transaction,
/// used from one thread at a time, and no access to a property stays open while another begins
/// (the methods below are the only writers and call nothing that reaches the node). Run-time
/// checks on them were a large part of the exclusivity checks that cost 15-18 % of a bulk
/// load (issue 14); every other property keeps its checks.
final class LeafNode {
    @exclusivity(unchecked) var keys: [[UInt8]]
    @exclusivity(unchecked) var values: [LeafValue]
    /// The encoded size of this leaf, kept in step with every edit.
    @exclusivity(unchecked) private(set) var byteCount: Int

    init(keys: [[UInt8]] = [], values: [LeafValue] = []) {
        self.keys = keys
        self.values = values
        byteCount = NodeLayout.leafBaseByteCount
        for index in keys.indices { byteCount += NodeLayout.leafEntryByteCount(key: keys[index], value: values[index]) }
    }

    func insert(key: [UInt8], value: LeafValue, at index: Int) {
        keys.insert(key, at: index)
        values.insert(value, at: index)
        byteCount += NodeLayout.leafEntryByteCount(key: key, value: value)
    }

    func replaceValue(at index: Int, with value: LeafValue) {
        byteCount += value.encodedByteCount - values[index].encodedByteCount
        values[index] = value
    }

    func remove(at index: Int) {
        byteCount -= NodeLayout.leafEntryByteCount(key: keys[index], value: values[index])
        keys.remove(at: index)
        values.remove(at: index)
    }

    /// Moves entries from `index` on into a new leaf.
    func splitOff(from index: Int) -> LeafNode {
        let right = LeafNode(keys: Array(keys[index...]), values: Array(values[index...]))
        keys.removeSubrange(index...)
        values.removeSubrange(index...)
        byteCount -= right.byteCount - NodeLayout.leafBaseByteCount
        return right
    }

    /// Moves entries from `index` on to the front of `right`, whose keys all sort after them.
    func moveTail(from index: Int, toFrontOf right: LeafNode) {
        let moved = movedByteCount(index..<keys.count)
        right.keys.insert(contentsOf: keys[index...], at: 0)
        right.values.insert(contentsOf: values[index...], at: 0)
        right.byteCount += moved
        keys.removeSubrange(index...)
        values.removeSubrange(index...)
        byteCount -= moved
    }

    /// Moves the first `count` entries to the end of `left`, whose keys all sort before them.
    func moveHead(_ count: Int, toEndOf left: LeafNode) {
        let moved = movedByteCount(0..<count)
        left.keys.append(contentsOf: keys[..<count])
        left.values.append(contentsOf: values[..<count])
        left.byteCount += moved
        keys.removeSubrange(..<count)
        values.removeSubrange(..<count)
        byteCount -= moved
    }

    /// Drops every entry outside `range` (their copies went to other leaves).
    func keepOnly(_ range: Range<Int>) {
        byteCount -= movedByteCount(range.upperBound..<keys.count) + movedByteCount(0..<range.lowerBound)
        keys.removeSubrange(range.upperBound...)
        values.removeSubrange(range.upperBound...)
        keys.removeSubrange(..<range.lowerBound)
        values.removeSubrange(..<range.lowerBound)
    }

    private func movedByteCount(_ range: Range<Int>) -> Int {
        var total = 0
        for index in range { total += NodeLayout.leafEntryByteCount(key: keys[index], value: values[index]) }
        return total
    }

    /// Appends every entry of `right`, whose keys all sort after this leaf's.
    func absorb(_ right: LeafNode) {
        keys.append(contentsOf: right.keys)
        values.append(contentsOf: right.values)
        byteCount += right.byteCount - NodeLayout.leafBaseByteCount
    }
}

/// A branch being edited: `keys.count + 1` children; child `i + 1` holds keys ≥ `keys[i]`.
///
/// `@exclusivity(unchecked)` for the same reasons as ``LeafNode``.
final class BranchNode {
    @exclusivity(unchecked) var keys: [[UInt8]]
    @exclusivity(unchecked) var children: [PageReference]
    @exclusivity(unchecked) private(set) var byteCount: Int

    init(keys: [[UInt8]], children: [PageReference]) {
        self.keys = keys
        self.children = children
        byteCount = NodeLayout.branchBaseByteCount
        for key in keys { byteCount += NodeLayout.branchEntryByteCount(key: key) }
    }

    func insert(separator: [UInt8], rightChild: PageReference, at keyIndex: Int) {
        keys.insert(separator, at: keyIndex)
        children.insert(rightChild, at: keyIndex + 1)
        byteCount += NodeLayout.branchEntryByteCount(key: separator)
    }

    /// Removes child `childIndex` and the separator that bounds it.
    func removeChild(at childIndex: Int) {
        let keyIndex = childIndex == 0 ? 0 : childIndex - 1
        if !keys.isEmpty {
            byteCount -= NodeLayout.branchEntryByteCount(key: keys[keyIndex])
            keys.remove(at: keyIndex)
        }
        children.remove(at: childIndex)
    }

    func replaceSeparator(at keyIndex: Int, with key: [UInt8]) {
        byteCount += NodeLayout.branchEntryByteCount(key: key) - NodeLayout.branchEntryByteCount(key: keys[keyIndex])
        keys[keyIndex] = key
    }

    /// Splits around the middle key, which moves up: returns it and the new right branch.
    func split() -> (separator: [UInt8], right: BranchNode) {
        let middle = NodeLayout.branchSplitIndex(self)
        let separator = keys[middle]
        let right = BranchNode(keys: Array(keys[(middle + 1)...]), children: Array(children[(middle + 1)...]))
        keys.removeSubrange(middle...)
        children.removeSubrange((middle + 1)...)
        self.recount()
        return (separator, right)
    }

    /// Appends `separator` and every key and child of `right`.
    func absorb(separator: [UInt8], _ right: BranchNode) {
        keys.append(separator)
        keys.append(contentsOf: right.keys)
        children.append(contentsOf: right.children)
        recount()
    }

    private func recount() {
        byteCount = NodeLayout.branchBaseByteCount
        for key in keys { byteCount += NodeLayout.branchEntryByteCount(key: key) }
    }
}

/// A page written in the current transaction and not yet sealed.
enum DirtyPage {
    case leaf(LeafNode)
    case branch(BranchNode)
    /// A page whose bytes are final apart from the header (overflow pages, list chunks).
    case raw(PageBuffer, kind: PageKind, count: Int)
}
