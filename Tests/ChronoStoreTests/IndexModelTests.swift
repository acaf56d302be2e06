// A randomized model test of index upkeep with Date identifiers and Date indexes with fractional
// seconds: inserts, updates of loaded records that change indexed values, deletes, rollbacks,
// undo and redo, checked after every step for 1:1, 1:n, n:n and computed indexes.
import ChronoStore
import ChronoStoreTestSupport
import Foundation
import Testing

struct Meeting: Codable, Sendable, Equatable {
    var id: Date
    var code: Int
    var start: Date
    var minutes: Double
    var attendees: [String]
}

enum MeetingFormat: DatastoreFormat {
    typealias Instance = Meeting
    typealias Identifier = Date
    static let name = "meetings"
    static func identifier(of instance: Meeting) -> Date { instance.id }
    static let code = DatastoreIndex<Self, Int>.oneToOne("code", \.code)
    static let start = DatastoreIndex<Self, Date>.oneToMany("start", \.start)
    static let attendees = DatastoreIndex<Self, String>.manyToMany("attendees", \.attendees)
    static let end = DatastoreIndex<Self, Date>.computed("end", kind: .oneToMany) { [$0.start.addingTimeInterval($0.minutes * 60)] }
    static var indexes: [AnyDatastoreIndex<Self>] {
        [AnyDatastoreIndex(code), AnyDatastoreIndex(start), AnyDatastoreIndex(attendees), AnyDatastoreIndex(end)]
    }
}

@Suite struct IndexModelTests {
    typealias Model = [Date: Meeting]
    static let steps = Environment.soakEnabled ? 3_000 : 200

    /// Twelve identifiers with fractional seconds that seconds since 1970 cannot hold exactly.
    static let identifiers = (0..<12).map { Date(timeIntervalSinceReferenceDate: 785_000_000.001237 + Double($0) * 0.1) }

    @Test func dateIndexesMatchAModelThroughUpdatesOfLoadedRecordsAndUndo() async throws {
        let seed = SeededGenerator.seed()
        print("IndexModelTests seed: \(seed) (replay with CHRONO_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let (store, directory) = try makeStore(ChronoStoreOptions(durability: .deferred(), retention: .limitless))
        _ = directory
        let meetings = store.datastore(MeetingFormat.self)
        var past: [Model] = [[:]]  // the model at each root on the head's line
        var undone: [Model] = []

        for step in 0..<Self.steps {
            let id = Self.identifiers[Int(random.next() % 12)]
            var model = past.last!
            var committed = false
            switch random.next() % 10 {
            case 0...2:  // insert or replace with a fresh instance
                committed = try await Self.persist(Self.meeting(id, &random), meetings, &model)
            case 3...5:  // load, edit the indexed values, persist the loaded instance
                if var loaded = try await meetings.load(id) {
                    Self.edit(&loaded, &random)
                    committed = try await Self.persist(loaded, meetings, &model)
                }
            case 6:  // delete through a loaded instance's identifier
                if let loaded = try await meetings.load(id) {
                    try await meetings.delete(loaded.id)
                    model[id] = nil
                    committed = true
                }
            case 7:
                try? await store.transaction {
                    try await meetings.persist(Self.meeting(id, &random))
                    throw Oops()
                }
            case 8 where past.count > 1:
                try await store.undo()
                undone.append(past.removeLast())
            default:
                if let next = undone.popLast() {
                    try await store.redo()
                    past.append(next)
                }
            }
            if committed {
                past.append(model)
                undone = []
            }
            try await Self.check(meetings, against: past.last!, context: "step \(step), seed \(seed)")
        }
    }

    /// Persists `meeting` and applies it to `model`; a unique-code clash must be refused.
    static func persist(_ meeting: Meeting, _ meetings: Datastore<MeetingFormat>, _ model: inout Model) async throws -> Bool {
        let clashes = model.values.contains { $0.id != meeting.id && $0.code == meeting.code }
        do {
            try await meetings.persist(meeting)
            #expect(!clashes, "a unique clash was accepted")
            model[meeting.id] = meeting
            return true
        } catch ChronoStoreError.uniqueIndexViolation {
            #expect(clashes, "a spurious unique clash")
            return false
        }
    }

    static func meeting(_ id: Date, _ random: inout SeededGenerator) -> Meeting {
        var meeting = Meeting(id: id, code: 0, start: id, minutes: 0, attendees: [])
        edit(&meeting, &random)
        return meeting
    }

    /// New indexed values: starts with fractional seconds, codes from a small range (so unique
    /// clashes happen), durations that can make different starts share an end.
    static func edit(_ meeting: inout Meeting, _ random: inout SeededGenerator) {
        meeting.code = Int(random.next() % 16)
        meeting.start = Date(timeIntervalSinceReferenceDate: 785_000_000 + Double(random.next() % 8) / 3 + 0.000_001_237)
        meeting.minutes = [0, 0.25, 1.0 / 3, 90][Int(random.next() % 4)]
        if random.next() % 4 == 0 {
            // Many values, with repeats (each is indexed once): past the few values that are
            // compared one by one.
            meeting.attendees = (0..<12).map { _ in "guest \(random.next() % 20)" }
        } else {
            meeting.attendees = ["ann", "bob", "cy", "dee"].filter { _ in random.next() % 3 == 0 }
        }
    }

    static func check(_ meetings: Datastore<MeetingFormat>, against model: Model, context: String) async throws {
        let records = model.values.sorted { $0.id < $1.id }
        #expect(try await meetings.loadAll().collect() == records, "\(context)")
        let byCode = records.sorted { $0.code < $1.code }.map(\.id)
        #expect(try await meetings.load(MeetingFormat.code, in: .all).collect().map(\.id) == byCode, "code, \(context)")
        try await expectEntries(meetings, MeetingFormat.start, records.map { ($0.start, $0.id) }, context)
        try await expectEntries(meetings, MeetingFormat.attendees, records.flatMap { r in Set(r.attendees).map { ($0, r.id) } }, context)
        try await expectEntries(
            meetings, MeetingFormat.end, records.map { ($0.start.addingTimeInterval($0.minutes * 60), $0.id) }, context)
    }

    /// The index yields exactly `entries`, ordered by value then identifier, in full and by value.
    static func expectEntries<Value: Comparable & Hashable>(
        _ meetings: Datastore<MeetingFormat>, _ index: DatastoreIndex<MeetingFormat, Value>, _ entries: [(Value, Date)],
        _ context: String
    ) async throws {
        let ordered = entries.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        #expect(try await meetings.load(index, in: .all).collect().map(\.id) == ordered.map(\.1), "\(index.name), \(context)")
        for value in Set(entries.map(\.0)) {
            let expected = ordered.filter { $0.0 == value }.map(\.1)
            #expect(try await meetings.load(index, equalTo: value).collect().map(\.id) == expected, "\(index.name) \(value), \(context)")
        }
    }
}
