// One published version of the store: a state record and the head root it names.

/// What a transaction starts from: the state a header slot named, and its head root.
package struct StoreSnapshot: Sendable {
    package var stateReference: PageReference
    package var state: StateRecord
    package var head: RootRecord

    package var transaction: TransactionID { state.transaction }
}

/// A collection's entry in the catalog tree: its tree root and entry count.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 16 | tree root (page, birth); none when empty |
/// | 16 | 8 | entry count |
struct CollectionEntry: Equatable {
    var root: PageReference
    var count: UInt64
    static let byteCount = PageReference.byteCount + 8

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeReference(root, at: 0)
            raw.storeLittleEndian(count, at: 16)
        }
        return bytes
    }

    static func decode(_ value: LeafValue, page: PageID) throws -> CollectionEntry {
        guard case .inline(let bytes) = value, bytes.count == byteCount else {
            throw StoreError.malformedPage(page: page, reason: "catalog entry has the wrong size")
        }
        let entry = bytes.withUnsafeBytes { raw in
            CollectionEntry(root: raw.loadReference(at: 0), count: raw.loadLittleEndian(at: 16))
        }
        // Far more entries than any file holds, yet safe to count up from and to convert to Int.
        guard entry.count < 1 << 62 else {
            throw StoreError.malformedPage(page: page, reason: "catalog entry count \(entry.count) is impossible")
        }
        return entry
    }

    static func validateName(_ name: String) throws -> [UInt8] {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { throw StoreError.invalidCollectionName(name) }
        return bytes
    }
}

/// Reads pages of one snapshot through the shared cache.
final class SnapshotReader: TreeReading {
    let pageFile: PageFile
    let pageCount: UInt64
    /// Collects every page read through this reader (recovery rewrites what it checked).
    let recorder: PageRecorder?
    var pageSize: Int { pageFile.pageSize }

    /// Rebuilds pages packing moved out of their slots; nil when the state has no pack index.
    let packs: PackReader?
    /// The part of the memory map this reader last read through (see `PageFile.read`): a reader
    /// reads only pages its pinned root reaches. Passed `inout` on every read, which nothing
    /// else reaches meanwhile (the reader is one transaction's, not shared between threads), so
    /// without the run-time exclusivity check (about 80 instructions a page read).
    @exclusivity(unchecked) private var window: PageFile.MappedWindow?

    init(
        pageFile: PageFile, pageCount: UInt64, packs: PackCounters = PackCounters(), prefersPacks: Bool = false,
        packsFirstBelow: UInt64 = 0, recorder: PageRecorder? = nil
    ) {
        self.pageFile = pageFile
        self.pageCount = pageCount
        self.recorder = recorder
        self.packs = packs.index.isNone
            ? nil
            : PackReader(
                pageFile: pageFile, packs: packs, pageCount: pageCount, packsFirstBelow: prefersPacks ? UInt64.max : packsFirstBelow)
    }

    /// Any page, verified and not cached (recovery's checks).
    func checkedPage(_ reference: PageReference, kind: PageKind?) throws -> PageBuffer {
        let page = try read(reference, kind: kind, cached: false)
        recorder?.pages.append(reference)
        return page
    }

    /// A page from its slot, or rebuilt from packed history when the slot holds another version.
    func read(_ reference: PageReference, kind: PageKind?, cached: Bool) throws -> PageBuffer {
        if let packs, reference.birth.rawValue < packs.packsFirstBelow {
            if let page = try packs.readPackedFirst(reference, kind: kind) { return page }
            if !packs.prefersPacks {
                // A head that may reach packed versions, and this one is not packed in the pinned
                // state: its slot holds it while the root is pinned. A private copy in the page
                // cache lets the next read of it skip the pack index (`readPackedFirst` finds it
                // there), and stays right whatever later happens to the slot.
                return try pageFile.read(reference, kind: kind, pageCount: pageCount, cached: cached, privateCopy: true, window: &window)
            }
        }
        // The slot (the head's pages are hot); the pack only when the slot holds another version.
        do {
            return try pageFile.read(reference, kind: kind, pageCount: pageCount, cached: cached, window: &window)
        } catch let error as StoreError {
            guard let packs else { throw error }
            return try packs.rebuild(afterSlotRead: error, reference, kind: kind)
        }
    }

    func node(_ reference: PageReference) throws -> NodeRead {
        let page = try read(reference, kind: nil, cached: true)
        recorder?.pages.append(reference)
        switch page.kindByte {
        case PageKind.leaf.rawValue: return .leafPage(LeafView(page: page))
        case PageKind.branch.rawValue: return .branchPage(BranchView(page: page))
        default: throw StoreError.pageKindMismatch(page: reference.page, expected: .leaf, found: page.kindByte)
        }
    }

    func rawPage(_ reference: PageReference, kind: PageKind) throws -> PageBuffer {
        let page = try read(reference, kind: kind, cached: kind != .overflowData)
        recorder?.pages.append(reference)
        return page
    }
}

/// The pages a recovery check read. Not shared between threads.
final class PageRecorder {
    var pages: [PageReference] = []
}
