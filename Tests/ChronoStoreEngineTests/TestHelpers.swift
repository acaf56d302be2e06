// Shared helpers for the engine tests.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Testing

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// Every entry of a collection, in key order.
func entries(_ reader: some CollectionReading, _ collection: String, reverse: Bool = false) throws -> [([UInt8], [UInt8])] {
    var result: [([UInt8], [UInt8])] = []
    try reader.scan(collection, range: .all, reverse: reverse) { key, value in
        result.append((key, value))
        return true
    }
    return result
}

/// Leaves and their encoded bytes in a collection's tree, read from the file.
struct LeafCensus {
    var leafCount = 0
    var byteCount = 0
    var branchCount = 0

    func fill(pageSize: Int) -> Double { Double(byteCount) / Double(leafCount * pageSize) }
}

func census(_ store: Store, collection: String) throws -> LeafCensus {
    let reader = try store.beginRead()
    defer { reader.close() }
    let entry = try #require(try reader.collectionEntry(named: collection))
    var census = LeafCensus()
    var pending = [entry.root]
    while let reference = pending.popLast() {
        let page = try store.pageFile.read(reference, kind: nil, pageCount: reader.snapshot.state.pageCount)
        if page.kindByte == PageKind.branch.rawValue {
            census.branchCount += 1
            let view = BranchView(page: page)
            pending += (0...view.keyCount).map { view.child(at: $0) }
        } else {
            census.leafCount += 1
            census.byteCount += NodeLayout.leafLayout(LeafView(page: page)).byteCount
        }
    }
    return census
}
