// Inspecting a store: verify (check every page) and info (format, sizes, head, collections).
import ChronoStoreEngine
import Foundation

extension Command {
    static let verify = Command(
        name: "verify", positionals: [.required("STORE")],
        summary: "read and check every page; exit 3 if anything is damaged",
        details: """
            Reads every page reachable from every retained root, checks each checksum and page
            identity, and checks the free-space accounting. Prints a summary (with --json
            {"ok":bool,"pagesChecked":N,"problems":[...]}) and exits 3 when it finds damage.
            Shows a progress bar on stderr when stderr is a terminal.
            """,
        examples: ["chrono verify notes.chrono", "chrono verify notes.chrono --json"],
        run: runVerify)

    static let info = Command(
        name: "info", positionals: [.required("STORE")],
        summary: "show format, sizes, head, retention and collections",
        details: """
            Prints the format version, page size, file size, live and free pages, retained roots,
            the head, the retention policy, and each collection with its entry count.
            """,
        examples: ["chrono info notes.chrono", "chrono info notes.chrono --json"],
        run: runInfo)

    private static func runVerify(_ invocation: Invocation) throws {
        let progress = ProgressLine(console: invocation.console, title: "verify", unit: "pages")
        let report = try invocation.withStore(readOnly: true) { store in
            defer { progress.finish() }
            return try store.verify { done, total in progress.update(done: done, total: total) }
        }
        if invocation.prefersJSON {
            invocation.console.print(.object([
                ("ok", .bool(report.isSound)), ("pagesChecked", .count(report.pagesChecked)),
                ("problems", .array(report.problems.map(JSONValue.string))),
            ]))
        } else {
            invocation.console.print(
                "\(report.isSound ? "OK" : "DAMAGED"): \(report.pagesChecked) pages checked; \(report.reachablePageCount) reachable, "
                    + "\(report.freePageCount) free, \(report.leakedPageCount) unaccounted.")
            for problem in report.problems { invocation.console.print("problem: \(problem)") }
        }
        guard report.isSound else {
            let count = report.problems.count
            throw CommandFailure("the store is damaged: \(count) problem\(count == 1 ? "" : "s") found", exitCode: .damage)
        }
    }

    private static func runInfo(_ invocation: Invocation) throws {
        let (store, snapshot, collections) = try invocation.withStore(readOnly: true) { store in
            try store.read { reader in
                (store, reader.snapshot, try reader.collectionNames().map { ($0, try reader.count(in: $0)) })
            }
        }
        let state = snapshot.state
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: invocation.storePath)[.size] as? Int) ?? 0
        let livePages = state.pageCount - 1 - state.freePageCount
        let hotBytes = (livePages - min(livePages, state.packs.packPages)) * UInt64(store.pageSize)
        // A head behind the pack cursor (after an undo past the packed roots) is read pack first
        // whatever the state's flag says.
        let headReadsPacks = state.headReadsOldVersionsFromPacks || snapshot.head.transaction < state.packs.cursor
        let fields: [(String, JSONValue, String)] = [
            ("formatVersion", .count(store.preamble.formatVersion), "format version   \(store.preamble.formatVersion)"),
            ("pageSize", .count(store.pageSize), "page size        \(store.pageSize) bytes"),
            ("fileBytes", .count(fileBytes), "file size        \(fileBytes) bytes"),
            ("livePages", .count(state.pageCount - 1 - state.freePageCount), "live pages       \(state.pageCount - 1 - state.freePageCount)"),
            ("freePages", .count(state.freePageCount), "free pages       \(state.freePageCount)"),
            ("retainedRoots", .count(state.retainedRootCount), "retained roots   \(state.retainedRootCount)"),
            ("hotBytes", .count(hotBytes), "hot bytes        \(hotBytes) (pages in their slots)"),
            ("packedBytes", .count(state.packs.packedBytes),
             "packed bytes     \(state.packs.packedBytes) (\(state.packs.packedPages) old page versions in \(state.packs.packPages) pack pages)"),
            ("head", .id(snapshot.head.transaction), "head             root \(snapshot.head.transaction.rawValue)" + headDetail(snapshot.head)),
            ("headReadsPacks", .bool(headReadsPacks),
             "head reads packs " + (headReadsPacks
                ? "yes (the head may reach packed history, after a revert or a deep undo: its reads look old page versions up in the pack first)"
                : "no")),
            ("retention", .string(state.retention.description), "retention        \(state.retention)"),
            ("created", .string(Timestamp.text(milliseconds: store.preamble.creationMilliseconds)),
             "created          \(Timestamp.text(milliseconds: store.preamble.creationMilliseconds))"),
        ]
        if invocation.prefersJSON {
            let list = JSONValue.array(collections.map { .object([("name", .string($0.0)), ("count", .count($0.1))]) })
            invocation.console.print(.object(fields.map { ($0.0, $0.1) } + [("collections", list)]))
            return
        }
        for field in fields { invocation.console.print(field.2) }
        invocation.console.print("collections      \(collections.count)")
        for (name, count) in collections { invocation.console.print("  \(name)\t\(count) entr\(count == 1 ? "y" : "ies")") }
    }

    private static func headDetail(_ head: RootRecord) -> String {
        " (" + (head.label.map { "\"\($0)\", " } ?? "") + "committed \(Timestamp.text(milliseconds: head.timeMilliseconds)))"
    }
}
