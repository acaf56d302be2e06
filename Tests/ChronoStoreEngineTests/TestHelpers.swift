// Shared helpers for the engine tests.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport

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
