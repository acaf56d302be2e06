// One move of a move journal, how journals are stored, and how several devices' moves merge.
public import ChronoStore
public import Foundation

/// A move recorded in a ``MoveJournal``, with what merging devices' journals needs.
public struct JournalMove<Move: Codable & Sendable>: Codable, Sendable {
    /// The app's move.
    public var move: Move
    /// When it was made; merged journals are ordered by it.
    public var date: Date
    /// The device that made it; breaks ties between equal dates.
    public var device: String
    /// Increases with every move the device records in the game, never reused; breaks the
    /// remaining ties and identifies the move across devices.
    public var sequence: Int64

    /// A move with these fields.
    public init(move: Move, date: Date, device: String, sequence: Int64) {
        self.move = move
        self.date = date
        self.device = device
        self.sequence = sequence
    }

    /// The merge order: by date, then device, then sequence. Total and the same on every device.
    public static func mergeOrder(_ lhs: Self, _ rhs: Self) -> Bool {
        (lhs.date, lhs.device, lhs.sequence) < (rhs.date, rhs.device, rhs.sequence)
    }

    /// The moves of several devices' journals as one game: every distinct move (by device and
    /// sequence) once, in ``mergeOrder(_:_:)``.
    public static func merge(_ journals: [[JournalMove<Move>]]) -> [JournalMove<Move>] {
        var seen = Set<String>()
        var moves: [JournalMove<Move>] = []
        for move in journals.joined() where seen.insert("\(move.device)#\(move.sequence)").inserted { moves.append(move) }
        return moves.sorted(by: mergeOrder)
    }
}

extension JournalMove: Equatable where Move: Equatable {}

/// What a journal file exported by ``MoveJournal/exportJSON()`` holds.
public struct JournalExport<Move: Codable & Sendable>: Codable, Sendable {
    /// The game.
    public var game: String
    /// The device that exported it.
    public var device: String
    /// The applied moves, in merge order.
    public var moves: [JournalMove<Move>]
}

/// A stored move: its game, its batch (undo step) and place in the batch.
struct StoredMove<Move: Codable & Sendable>: Codable, Sendable {
    var game: String
    var batch: Int64
    var index: Int32
    var move: JournalMove<Move>
}

/// Every journal's moves live in one datastore, identified by (game, batch, index in batch).
enum MoveJournalFormat<Move: Codable & Sendable>: DatastoreFormat {
    typealias Instance = StoredMove<Move>
    typealias Identifier = KeyTuple3<String, Int64, Int32>
    static var name: String { "recipes.move-journal" }
    static func identifier(of instance: Instance) -> Identifier { KeyTuple3(instance.game, instance.batch, instance.index) }

    /// The moves of `game` in batches `first...last`.
    static func bounds(of game: String, batches first: Int64 = .min, through last: Int64 = .max) -> KeyBounds<Identifier> {
        KeyBounds(from: .including(KeyTuple3(game, first, .min)), to: .including(KeyTuple3(game, last, .max)))
    }
}

/// Where a journal stands: batches up to `applied` are in effect; those up to `top` can be redone.
struct JournalPosition: Codable, Sendable, Equatable {
    var applied: Int64 = 0
    var top: Int64 = 0
    /// The next sequence number for this device's moves.
    var nextSequence: Int64 = 1
}
