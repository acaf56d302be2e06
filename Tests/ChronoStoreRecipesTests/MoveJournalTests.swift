// MoveJournal: batches as undo steps, undo and redo as forward edits of one game, redo cut, devices merged, relaunch.
import ChronoStore
import ChronoStoreRecipes
import ChronoStoreTestSupport
import Foundation
import Testing

private struct Fill: Codable, Sendable, Equatable {
    var cell: Int
    var letter: String
}

@Suite struct MoveJournalTests {
    private func letters(_ journal: MoveJournal<Fill>) async throws -> String {
        try await journal.moves().map(\.move.letter).joined()
    }

    @Test func batchesUndoAndRedoAsForwardEditsOfOneGame() async throws {
        let directory = try TemporaryDirectory(prefix: "recipes")
        let url = URL(fileURLWithPath: directory.file("games.chrono"))
        let store = try await ChronoStore.open(at: url)
        let puzzle = MoveJournal<Fill>(store: store, game: "puzzle", device: "phone")
        let other = MoveJournal<Fill>(store: store, game: "other", device: "phone")
        let start = Date(timeIntervalSince1970: 1_000)
        try await puzzle.record([Fill(cell: 1, letter: "A"), Fill(cell: 2, letter: "B")], date: start)
        try await other.record([Fill(cell: 1, letter: "X")], date: start)
        try await puzzle.record([Fill(cell: 3, letter: "C")], date: start.addingTimeInterval(1))
        #expect(try await letters(puzzle) == "ABC")

        let commits = try await store.history().count
        #expect(try await puzzle.undo())
        #expect(try await letters(puzzle) == "AB")
        #expect(try await puzzle.undo())
        #expect(try await letters(puzzle) == "", "a batch undoes as a whole")
        #expect(try await puzzle.undo() == false)
        #expect(try await letters(other) == "X", "undo edits this game only")
        #expect(try await store.history().count == commits + 2, "each undo is a new commit")
        #expect(try await puzzle.redo())
        #expect(try await letters(puzzle) == "AB")
        #expect(try await puzzle.undoState() == (true, true))

        try await puzzle.record([Fill(cell: 4, letter: "D")], date: start.addingTimeInterval(2))
        #expect(try await letters(puzzle) == "ABD")
        #expect(try await puzzle.redo() == false, "a new edit cuts redo")
        try await store.close()

        let reopened = try await ChronoStore.open(at: url)
        let again = MoveJournal<Fill>(store: reopened, game: "puzzle", device: "phone")
        #expect(try await letters(again) == "ABD")
        #expect(try await again.undo())
        #expect(try await letters(again) == "AB")
        try await reopened.close()
    }

    @Test func devicesJournalsMergeByTimestampWithDeterministicTies() async throws {
        let phoneStore = try ChronoStore.inMemory()
        let tabletStore = try ChronoStore.inMemory()
        let phone = MoveJournal<Fill>(store: phoneStore, game: "puzzle", device: "phone")
        let tablet = MoveJournal<Fill>(store: tabletStore, game: "puzzle", device: "tablet")
        let t = Date(timeIntervalSince1970: 5_000)
        try await phone.record([Fill(cell: 1, letter: "p1")], date: t)
        try await tablet.record([Fill(cell: 2, letter: "t1")], date: t)  // same instant: "phone" < "tablet"
        try await tablet.record([Fill(cell: 3, letter: "t2")], date: t.addingTimeInterval(-1))
        try await phone.record([Fill(cell: 4, letter: "p2"), Fill(cell: 5, letter: "p3")], date: t.addingTimeInterval(1))

        #expect(try await phone.importJSON(try await tablet.exportJSON()) == 2)
        #expect(try await tablet.importJSON(try await phone.exportJSON()) == 3)
        let expected = "t2 p1 t1 p2 p3"
        #expect(try await phone.moves().map(\.move.letter).joined(separator: " ") == expected)
        #expect(try await tablet.moves().map(\.move.letter).joined(separator: " ") == expected)
        #expect(try await phone.importJSON(try await tablet.exportJSON()) == 0, "moves already merged are not doubled")

        let exports = [try await phone.exportJSON(), try await tablet.exportJSON()]
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let journals = try exports.map { try decoder.decode(JournalExport<Fill>.self, from: $0).moves }
        #expect(JournalMove.merge(journals).map(\.move.letter).joined(separator: " ") == expected)
        #expect(JournalMove.merge(journals.reversed()).map(\.move.letter) == JournalMove.merge(journals).map(\.move.letter))

        #expect(try await phone.undo())
        #expect(try await phone.moves().map(\.move.letter) == ["p1", "p2", "p3"], "one undo takes back the whole import")
    }
}
