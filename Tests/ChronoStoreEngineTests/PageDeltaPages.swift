// Random leaf and branch pages, and the edits a commit makes to them, for the page delta tests.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport

/// Builds sealed B+tree pages the way the engine does (through `NodeLayout`) from random
/// contents, and the next version of a page after one random edit, as copy-on-write writes it:
/// a new page number, a newer birth.
struct DeltaPageMaker {
    var generator: SeededGenerator
    let pageSize: Int

    init(seed: UInt64, pageSize: Int = 4096) {
        generator = SeededGenerator(seed: seed)
        self.pageSize = pageSize
    }

    mutating func number(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    mutating func reference() -> PageReference {
        PageReference(page: PageID(UInt64(number(2...500_000))), birth: TransactionID(UInt64(number(2...2_000_000))))
    }

    mutating func key() -> [UInt8] {
        // Keys share prefixes, as real keys do ("user:1041", "user:1042").
        let prefix: [UInt8] = Array("key:".utf8)
        return prefix + generator.bytes(number(1...28))
    }

    mutating func value() -> LeafValue {
        if number(0...19) == 0 {
            return .overflow(OverflowReference(index: reference(), length: UInt64(number(2_000...90_000))))
        }
        return .inline(generator.bytes(number(0...180)))
    }

    /// A leaf filled to between a third and all of a page.
    mutating func leaf() -> LeafNode {
        let node = LeafNode()
        let goal = number(pageSize / 3...pageSize - 64)
        while true {
            let key = key()
            let value = value()
            guard node.byteCount + NodeLayout.leafEntryByteCount(key: key, value: value) <= goal else { break }
            let slot = key.withUnsafeBytes { BTree.search(node, $0) }
            if !slot.found { node.insert(key: key, value: value, at: slot.index) }
        }
        return node
    }

    mutating func branch() -> BranchNode {
        var keys: [[UInt8]] = []
        var children = [reference()]
        var byteCount = NodeLayout.branchBaseByteCount
        let goal = number(pageSize / 4...pageSize - 64)
        while true {
            let key = key()
            guard byteCount + NodeLayout.branchEntryByteCount(key: key) <= goal else { break }
            byteCount += NodeLayout.branchEntryByteCount(key: key)
            keys.append(key)
            children.append(reference())
        }
        let order = keys.indices.sorted { KeyOrder.compare(keys[$0], keys[$1]) < 0 }
        return BranchNode(keys: order.map { keys[$0] }, children: children)
    }

    func seal(_ node: LeafNode, as reference: PageReference) -> [UInt8] {
        let page = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(node, into: page)
        page.seal(kind: .leaf, page: reference.page, birth: reference.birth, count: node.keys.count)
        return Array(page.readOnly)
    }

    func seal(_ node: BranchNode, as reference: PageReference) -> [UInt8] {
        let page = PageBuffer(pageSize: pageSize)
        NodeLayout.encode(node, into: page)
        page.seal(kind: .branch, page: reference.page, birth: reference.birth, count: node.keys.count)
        return Array(page.readOnly)
    }

    /// One edit a transaction makes to a leaf: a value replaced (same size or not), a key
    /// inserted or deleted. Returns false when the edit would not fit.
    @discardableResult
    mutating func edit(_ node: LeafNode) -> Bool {
        guard !node.keys.isEmpty else { return false }
        let index = number(0...node.keys.count - 1)
        switch number(0...3) {
        case 0:
            let size = node.values[index].encodedByteCount
            node.replaceValue(at: index, with: .inline(generator.bytes(size)))
        case 1:
            node.replaceValue(at: index, with: value())
        case 2:
            let key = key()
            let slot = key.withUnsafeBytes { BTree.search(node, $0) }
            guard !slot.found else { return false }
            node.insert(key: key, value: value(), at: slot.index)
        default:
            node.remove(at: index)
        }
        return node.byteCount <= pageSize
    }

    /// One edit a transaction makes to a branch: a child replaced (the usual copy-on-write
    /// path), or a child split or merged away.
    mutating func edit(_ node: BranchNode) {
        let index = number(0...node.children.count - 1)
        switch number(0...3) {
        case 0, 1:
            node.children[index] = reference()
        case 2:
            let separator = key()
            let position = node.keys.firstIndex { KeyOrder.compare($0, separator) > 0 } ?? node.keys.count
            node.insert(separator: separator, rightChild: reference(), at: position)
        default:
            if node.children.count > 1 { node.removeChild(at: index) }
        }
    }

    /// The next version of a sealed page's identity: a new page number and a newer birth.
    mutating func successor(of reference: PageReference) -> PageReference {
        PageReference(page: PageID(UInt64(number(2...500_000))), birth: TransactionID(reference.birth.rawValue + UInt64(number(1...300))))
    }
}
