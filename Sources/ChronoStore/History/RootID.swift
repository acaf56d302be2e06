// Naming roots: ids, selections (head, root, date, snapshot), and history list entries.
public import Foundation
import ChronoStoreEngine

/// The id of a root: the commit record of one transaction. Ids grow with every commit (and with
/// every undo, redo or other history change), so a larger id is a later state change.
public struct RootID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The engine's transaction number.
    public let rawValue: UInt64

    /// The root with this number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    init(_ id: TransactionID) { rawValue = id.rawValue }

    var engineValue: TransactionID { TransactionID(rawValue) }

    /// Orders by commit.
    public static func < (lhs: RootID, rhs: RootID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// "root N".
    public var description: String { "root \(rawValue)" }
}

/// Which root a read should see.
public enum RootSelection: Sendable, Equatable {
    /// The current head.
    case head
    /// A retained root.
    case root(RootID)
    /// The root that was the head at this date (after commits, undos, redos, reverts and
    /// checkouts alike); the head for a date at or after the present. Throws when that root is
    /// no longer retained, or when the date is older than the history retention keeps.
    case date(Date)
    /// The root a snapshot pins.
    case snapshot(String)

    var engineValue: RootSelector {
        switch self {
        case .head: .head
        case .root(let id): .root(id.engineValue)
        case .date(let date): .time(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
        case .snapshot(let name): .snapshot(name)
        }
    }
}

/// One retained root, as ``ChronoStore/history(allBranches:)`` lists it.
public struct HistoryRoot: Sendable, Equatable, Identifiable {
    /// The root's id.
    public var id: RootID
    /// The head it was committed on (where undo goes), if retained.
    public var parent: RootID?
    /// When it was committed.
    public var date: Date
    /// The transaction's label (action name), if any.
    public var label: String?
    /// Whether it is the current head.
    public var isHead: Bool
    /// Whether it is the tip of a side branch (left behind by undo and a new commit).
    public var isBranchTip: Bool
    /// For a revert, restore or snapshot checkout: the root whose contents it took.
    public var revertedTo: RootID?
    /// Where ``ChronoStore/redo()`` would go from this root.
    public var redoTarget: RootID?
    /// Names of the snapshots pinning this root.
    public var snapshots: [String]

    init(_ item: HistoryItem) {
        id = RootID(item.id)
        parent = item.parent.map(RootID.init)
        date = Date(timeIntervalSince1970: Double(item.timeMilliseconds) / 1000)
        label = item.label
        isHead = item.isHead
        isBranchTip = item.isBranchTip
        revertedTo = item.revertedTo.map(RootID.init)
        redoTarget = item.redoTarget.map(RootID.init)
        snapshots = item.snapshots
    }
}

/// A named, pinned root.
public struct NamedSnapshot: Sendable, Equatable {
    /// The snapshot's name.
    public var name: String
    /// The root it pins.
    public var root: RootID
    /// When it was taken.
    public var date: Date
    /// Records in every collection of the root (indexes and metadata included).
    public var entryCount: Int

    init(_ info: SnapshotInfo) {
        name = info.name
        root = RootID(info.root)
        date = Date(timeIntervalSince1970: Double(info.timeMilliseconds) / 1000)
        entryCount = info.recordCount
    }
}
