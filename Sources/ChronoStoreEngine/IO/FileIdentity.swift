// Which file a descriptor or a path reaches: its device and inode, whatever its name.

/// The device and inode of a file. Two names (hard links, symbolic links) for one store have one
/// identity; a file renamed over a store's path has another.
package struct FileIdentity: Equatable, Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
}
