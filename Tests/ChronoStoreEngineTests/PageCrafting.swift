// Editing a page of a store file and recomputing its checksum, as a hostile file's author would.
@testable import ChronoStoreEngine
import Foundation

/// Crafted pages: edits that every checksum still vouches for, so only structural checks catch them.
enum PageCrafting {
    /// Applies `edit` to the body of page `page` in the file at `path` and reseals its checksum.
    static func edit(
        _ path: String, page: PageID, pageSize: Int, _ edit: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        let offset = page.rawValue * UInt64(pageSize)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        guard let data = try handle.read(upToCount: pageSize), data.count == pageSize else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var bytes = [UInt8](data)
        try bytes.withUnsafeMutableBytes { raw in
            try edit(raw)
            reseal(raw)
        }
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: bytes)
    }

    /// Edits the value of the history entry of `root` in the journal of the state page held in
    /// `bytes` (format version 4), through `edit`; returns false when the journal lacks it. The
    /// caller reseals the page.
    static func editJournaledHistoryEntry(
        _ bytes: UnsafeMutableRawBufferPointer, root: TransactionID, _ edit: (UnsafeMutableRawBufferPointer) -> Void
    ) -> Bool {
        let end = StateJournal.recordsOffset + Int(bytes.loadLittleEndian(at: StateJournal.byteCountOffset, as: UInt16.self))
        var cursor = StateJournal.recordsOffset
        while cursor < end {
            let tree = bytes[cursor]
            let keyCount = Int(bytes[cursor + 1])
            let key = Array(bytes[(cursor + 2)..<(cursor + 2 + keyCount)])
            cursor += 2 + keyCount
            let stored = bytes.loadLittleEndian(at: cursor, as: UInt16.self)
            let valueCount = stored == StateJournal.removedMarker ? 0 : Int(stored)
            cursor += 2
            if tree == StateJournal.Tree.historyIndex.rawValue, key == HistoryIndex.key(root), valueCount > 0 {
                edit(UnsafeMutableRawBufferPointer(rebasing: bytes[cursor..<(cursor + valueCount)]))
                return true
            }
            cursor += valueCount
        }
        return false
    }

    /// Recomputes the checksum of a page held in `bytes`.
    static func reseal(_ bytes: UnsafeMutableRawBufferPointer) {
        let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[PageHeader.kindOffset...]))
        bytes.storeLittleEndian(checksum, at: PageHeader.checksumOffset)
    }

    /// The reference a page's header claims for itself (page id and birth).
    static func reference(of bytes: UnsafeMutableRawBufferPointer) -> PageReference {
        PageReference(
            page: PageID(bytes.loadLittleEndian(at: PageHeader.pageIDOffset, as: UInt64.self)),
            birth: TransactionID(bytes.loadLittleEndian(at: PageHeader.birthOffset, as: UInt64.self)))
    }

    /// Where child `index` of the branch page in `bytes` is stored.
    static func childOffset(_ bytes: UnsafeMutableRawBufferPointer, _ index: Int) -> Int {
        if index == 0 { return NodeLayout.branchFirstChildOffset }
        let entry = Int(bytes.loadLittleEndian(at: NodeLayout.branchOffsetsStart + 2 * (index - 1), as: UInt16.self))
        return entry + 2 + Int(bytes.loadLittleEndian(at: entry, as: UInt16.self))
    }
}
