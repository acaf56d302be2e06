// One record change in engine terms: a collection, a key, and the bytes before and after.

/// A change to one key of one collection; nil means absent.
struct RawChange: Sendable, Equatable {
    var collection: String
    var key: [UInt8]
    var old: [UInt8]?
    var new: [UInt8]?
}
