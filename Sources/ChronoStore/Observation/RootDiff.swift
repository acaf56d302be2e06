// Computing the changes to one collection between two roots, for undo, redo, revert, restore and
// other processes' commits.
import ChronoStoreEngine

/// Compares one collection as two readers see it, in key order, in bounded chunks.
///
/// Cost: O(entries of the collection in both roots): it reads every entry of both versions.
/// (An engine-level diff that skips subtrees shared by both roots would make this O(changes ×
/// log n); the engine does not offer one yet.) Memory: one chunk of each side at a time.
enum RootDiff {
    static let chunkSize = 256

    static func changes(
        in collection: String, from old: any CollectionReading, to new: any CollectionReading
    ) throws -> [RawChange] {
        var result: [RawChange] = []
        var lower: KeyBound? = nil
        while true {
            // The next chunk of the old version, and the same key span of the new version.
            var oldEntries: [([UInt8], [UInt8])] = []
            try old.scan(collection, range: KeyRange(lower: lower, upper: nil), reverse: false) { key, value in
                oldEntries.append((key, value))
                return oldEntries.count < chunkSize
            }
            let isLast = oldEntries.count < chunkSize
            let upper = isLast ? nil : KeyBound(oldEntries.last!.0, inclusive: true)
            var newEntries: [([UInt8], [UInt8])] = []
            try new.scan(collection, range: KeyRange(lower: lower, upper: upper), reverse: false) { key, value in
                newEntries.append((key, value))
                return true
            }
            merge(collection, oldEntries, newEntries, into: &result)
            if isLast { return result }
            lower = KeyBound(oldEntries.last!.0, inclusive: false)
        }
    }

    private static func merge(
        _ collection: String, _ old: [([UInt8], [UInt8])], _ new: [([UInt8], [UInt8])], into result: inout [RawChange]
    ) {
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < old.count || newIndex < new.count {
            let order: Int
            if oldIndex == old.count {
                order = 1
            } else if newIndex == new.count {
                order = -1
            } else {
                order = compare(old[oldIndex].0, new[newIndex].0)
            }
            if order < 0 {
                result.append(RawChange(collection: collection, key: old[oldIndex].0, old: old[oldIndex].1, new: nil))
                oldIndex += 1
            } else if order > 0 {
                result.append(RawChange(collection: collection, key: new[newIndex].0, old: nil, new: new[newIndex].1))
                newIndex += 1
            } else {
                if old[oldIndex].1 != new[newIndex].1 {
                    result.append(
                        RawChange(collection: collection, key: old[oldIndex].0, old: old[oldIndex].1, new: new[newIndex].1))
                }
                oldIndex += 1
                newIndex += 1
            }
        }
    }

    /// Unsigned lexicographic order, shorter first on a shared prefix (the engine's key order).
    static func compare(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
        for (left, right) in zip(lhs, rhs) where left != right { return left < right ? -1 : 1 }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }
}
