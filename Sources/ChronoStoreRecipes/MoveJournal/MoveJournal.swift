// A game's move journal: batches of moves as undo steps, undo and redo as forward edits, devices merged.
public import ChronoStore
public import Foundation

/// The moves of one game (a crossword, a chess match), recorded in batches that undo and redo
/// as a whole, kept in a store across launches, and merged with other devices' journals.
///
/// Undo and redo are forward edits of this game only: each is a new commit moving the game's
/// position, so the store's other games and data are untouched, and the store's own history
/// still has every step. Recording after an undo drops the undone batches (a new edit cuts
/// redo). ``moves()`` gives the applied moves in merge order (date, then device, then
/// sequence), so journals imported from other devices (``importJSON(_:)``) interleave by time,
/// the same way on every device.
///
/// ```swift
/// let journal = MoveJournal<Fill>(store: store, game: "puzzle-42", device: "iPad")
/// try await journal.record([Fill(cell: 3, letter: "A"), Fill(cell: 4, letter: "B")])  // one undo step
/// try await journal.undo()
/// ```
public final class MoveJournal<Move: Codable & Sendable>: Sendable {
    /// The store holding the journal.
    public let store: ChronoStore
    /// The game's name.
    public let game: String
    /// This device's name, recorded with its moves.
    public let device: String
    let datastore: Datastore<MoveJournalFormat<Move>>

    /// The journal of `game` in `store`, recording moves as `device`.
    public init(store: ChronoStore, game: String, device: String) {
        self.store = store
        self.game = game
        self.device = device
        self.datastore = store.datastore(MoveJournalFormat<Move>.self)
    }

    private var positionKey: String { "recipes.move-journal/\(game)" }

    /// Records `moves` as one batch (one undo step), dated `date`, in one commit. Undone batches
    /// are dropped first: redo is no longer possible.
    public func record(_ moves: [Move], date: Date = Date()) async throws {
        try await store.transaction(label: "\(game): move") {
            var position = try await self.position()
            let sequences = position.nextSequence..<(position.nextSequence + Int64(moves.count))
            position.nextSequence = sequences.upperBound
            let stamped = zip(moves, sequences).map { JournalMove(move: $0, date: date, device: device, sequence: $1) }
            try await appendBatch(stamped, position: &position)
        }
    }

    /// Takes back the last applied batch, as a new commit. Returns false when there is none.
    @discardableResult
    public func undo() async throws -> Bool { try await movePosition(by: -1, label: "\(game): undo") }

    /// Re-applies the batch undone last, as a new commit. Returns false when there is none.
    @discardableResult
    public func redo() async throws -> Bool { try await movePosition(by: 1, label: "\(game): redo") }

    /// Whether there is a batch to undo, and one to redo.
    public func undoState() async throws -> (canUndo: Bool, canRedo: Bool) {
        let position = try await self.position()
        return (position.applied > 0, position.top > position.applied)
    }

    /// The applied moves, in merge order (date, device, sequence).
    public func moves() async throws -> [JournalMove<Move>] {
        let applied = try await position().applied
        guard applied > 0 else { return [] }
        let stored = try await datastore.load(MoveJournalFormat<Move>.bounds(of: game, batches: 1, through: applied)).collect()
        return stored.map(\.move).sorted(by: JournalMove.mergeOrder)
    }

    /// The applied moves as JSON (a ``JournalExport``), to send to another device.
    public func exportJSON() async throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(JournalExport(game: game, device: device, moves: try await moves()))
    }

    /// Merges another device's export into this journal: the moves not already here (by device
    /// and sequence) are recorded as one batch, so one undo takes the import back. Returns how
    /// many moves were new.
    @discardableResult
    public func importJSON(_ data: Data) async throws -> Int {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let export = try decoder.decode(JournalExport<Move>.self, from: data)
        return try await store.transaction(label: "\(game): import from \(export.device)") {
            let present = Set(try await moves().map { "\($0.device)#\($0.sequence)" })
            let new = export.moves.filter { !present.contains("\($0.device)#\($0.sequence)") }
            guard !new.isEmpty else { return 0 }
            var position = try await self.position()
            try await appendBatch(new, position: &position)
            return new.count
        }
    }

    /// Stores `moves` as batch `applied + 1`, dropping undone batches, and saves the position.
    private func appendBatch(_ moves: [JournalMove<Move>], position: inout JournalPosition) async throws {
        if position.top > position.applied {
            try await datastore.delete(in: MoveJournalFormat<Move>.bounds(of: game, batches: position.applied + 1))
        }
        let batch = position.applied + 1
        let stored = moves.enumerated().map { StoredMove(game: game, batch: batch, index: Int32($0.offset), move: $0.element) }
        try await datastore.persist(contentsOf: stored)
        position.applied = batch
        position.top = batch
        try await store.setValue(position, forKey: positionKey)
    }

    private func movePosition(by step: Int64, label: String) async throws -> Bool {
        try await store.transaction(label: label) {
            var position = try await self.position()
            let target = position.applied + step
            guard target >= 0, target <= position.top else { return false }
            position.applied = target
            try await store.setValue(position, forKey: positionKey)
            return true
        }
    }

    private func position() async throws -> JournalPosition {
        try await store.value(JournalPosition.self, forKey: positionKey) ?? JournalPosition()
    }
}
