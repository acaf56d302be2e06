// The kinds of page a store holds, as stored in every page header.

/// What a page holds. Stored as one byte in the page header; never reuse a value.
package enum PageKind: UInt8, Sendable, CustomStringConvertible {
    /// A B+tree leaf: sorted keys with inline values or overflow references.
    case leaf = 1
    /// A B+tree branch: separator keys and child references.
    case branch = 2
    /// Lists the data pages of one large value.
    case overflowIndex = 3
    /// Raw bytes of one large value.
    case overflowData = 4
    /// A commit record: one root of the root chain.
    case root = 5
    /// A state record: what a header slot points at (head, system trees, allocation mark).
    case state = 6
    /// One chunk of a page list that did not fit inline in its owner.
    case listChunk = 7
    /// Packed history (format version 2): old page versions as deltas (see ``PackEntry``).
    case pack = 8

    package var description: String {
        switch self {
        case .leaf: "leaf"
        case .branch: "branch"
        case .overflowIndex: "overflow index"
        case .overflowData: "overflow data"
        case .root: "root"
        case .state: "state"
        case .listChunk: "list chunk"
        case .pack: "pack"
        }
    }
}
