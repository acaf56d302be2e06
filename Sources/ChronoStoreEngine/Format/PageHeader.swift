// The 24-byte header at the start of every page, and the checksum that seals it.

/// Byte layout of the page header (little-endian):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | CRC-32C of bytes 4 ..< pageSize |
/// | 4 | 1 | kind (``PageKind``) |
/// | 5 | 1 | flags (0; reserved: a stored leaf or branch with other flags is malformed. While a
/// |   |   | write transaction holds a leaf or branch as unsealed bytes, it counts byte edits or separator |
/// |   |   | layouts here; sealing writes 0) |
/// | 6 | 2 | entry count (meaning depends on the kind) |
/// | 8 | 8 | this page's own id |
/// | 16 | 8 | birth: the transaction that wrote the page |
package enum PageHeader {
    package static let checksumOffset = 0
    package static let kindOffset = checksumOffset + 4
    package static let flagsOffset = kindOffset + 1
    package static let countOffset = flagsOffset + 1
    package static let pageIDOffset = countOffset + 2
    package static let birthOffset = pageIDOffset + 8
    package static let byteCount = birthOffset + 8
}

/// The page sizes a store may use.
package enum PageSize {
    package static let minimum = 4096
    package static let maximum = 65536
    package static let standard = 4096

    package static func validate(_ size: Int) throws {
        guard size >= minimum, size <= maximum, size & (size - 1) == 0 else {
            throw StoreError.invalidPageSize(size)
        }
    }
}
