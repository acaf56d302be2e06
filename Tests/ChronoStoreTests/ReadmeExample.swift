// The README's typed example, verbatim: ReadmeExampleTests checks that README.md shows exactly this file.
import ChronoStore
import Foundation

/// One line of a calculator's history.
struct Calculation: Codable, Sendable, Identifiable {
    var id: UUID
    var date: Date
    var expression: String
    var result: Double
    var tags: [String]
}

/// Declares how calculations are stored: their identifier (`id`), version and indexes.
enum CalculationFormat: DatastoreFormat {
    typealias Instance = Calculation
    static let name = "calculations"
    static let date = DatastoreIndex<Self, Date>.oneToMany("date", \.date)
    static let tags = DatastoreIndex<Self, String>.manyToMany("tags", \.tags)
    static var indexes: [AnyDatastoreIndex<Self>] { [AnyDatastoreIndex(date), AnyDatastoreIndex(tags)] }
}

/// Opens a store in `directory`, persists, queries, undoes, snapshots and backs up.
func calculatorExample(in directory: URL) async throws -> [String] {
    // Open (or create) the store. Apps can use ChronoStore.defaultURL() for the usual place.
    let store = try await ChronoStore.open(at: directory.appendingPathComponent("calculator.chrono"))
    let calculations = store.datastore(CalculationFormat.self)

    // Persist: a transaction commits its writes atomically, as one undoable step.
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    try await store.transaction(label: "Add calculations") {
        let entries = [("1 + 1", 2.0, []), ("6 × 7", 42, ["answer"]), ("2 ^ 10", 1024, [])]
        for (offset, (expression, result, tags)) in entries.enumerated() {
            try await calculations.persist(
                Calculation(id: UUID(), date: start + Double(offset), expression: expression, result: result, tags: tags))
        }
    }

    // Query: newest first through the date index, streamed in chunks.
    var lines: [String] = []
    for try await calculation in calculations.load(CalculationFormat.date, in: .all, order: .descending) {
        lines.append("\(calculation.expression) = \(calculation.result)")
    }

    // Snapshot, delete through the tags index, then undo the delete.
    try await store.createSnapshot(named: "before-cleanup")
    for try await calculation in calculations.load(CalculationFormat.tags, equalTo: "answer") {
        try await calculations.delete(calculation.id)
    }
    try await store.undo()
    lines.append("after undo: \(try await calculations.count()) calculations")

    // Back up the head to a self-contained store file, then close.
    try await store.backup(to: directory.appendingPathComponent("calculator-backup.chrono"))
    try await store.close()
    return lines
}
