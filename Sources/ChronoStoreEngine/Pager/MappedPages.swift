// Pages read straight from a memory map of the data file, each verified once per mapping.

import ChronoAtomics

/// A ``FileMapping`` of the data file seen as pages, with a record of which page versions have
/// been verified through it.
///
/// The record holds, for each page number, the birth of the version last verified in its slot
/// (plus one, so that 0 means "never verified"). Committed pages never change while a root,
/// snapshot or reader can reach them (invariant 1), so a version verified once stays valid for
/// as long as anything can ask for it; a slot reused by a later commit holds another birth and
/// is verified again. This is the same trust the page cache gives a cached copy, without the
/// copy. The words are read and written with atomics: readers on several threads share them.
///
/// `@unchecked Sendable`: the mapping is immutable and the record is only touched atomically.
final class MappedPages: @unchecked Sendable {
    let mapping: FileMapping
    let pageSize: Int
    /// How many pages the mapping covers.
    let pageCapacity: UInt64
    private let verifiedBirths: UnsafeMutablePointer<UInt64>

    init?(file: PosixFile, pageSize: Int, byteCount: Int) {
        let pageCapacity = UInt64(byteCount / pageSize)
        // The kernel's zero pages, touched only where pages are verified: the record has 8 bytes
        // for every page of the mapping, which is twice the file and at least 64 MiB (128 KiB at
        // every open, 0.9 MiB for a 232 MB file), too much to write at every open and remap.
        guard let record = Platform.zeroedWords(Int(pageCapacity)) else { return nil }
        guard let mapping = FileMapping(file: file, byteCount: byteCount) else {
            Platform.releaseZeroedWords(record, count: Int(pageCapacity))
            return nil
        }
        self.mapping = mapping
        self.pageSize = pageSize
        self.pageCapacity = pageCapacity
        verifiedBirths = record
    }

    deinit { Platform.releaseZeroedWords(verifiedBirths, count: Int(pageCapacity)) }

    /// A buffer over page `page`'s bytes in the mapping (no copy). The caller has checked that
    /// the page lies inside both the mapping and the file.
    func view(of page: PageID) -> PageBuffer {
        let start = mapping.base + Int(page.rawValue) * pageSize
        return PageBuffer(viewing: UnsafeMutableRawBufferPointer(start: start, count: pageSize), keeping: mapping)
    }

    /// Whether the version of `page` born in `birth` was verified through this mapping.
    func isVerified(_ page: PageID, birth: TransactionID) -> Bool {
        chrono_atomic_load(verifiedBirths + Int(page.rawValue)) == birth.rawValue &+ 1
    }

    /// Records that the version of `page` born in `birth` passed verification.
    func markVerified(_ page: PageID, birth: TransactionID) {
        chrono_atomic_store(verifiedBirths + Int(page.rawValue), birth.rawValue &+ 1)
    }
}
