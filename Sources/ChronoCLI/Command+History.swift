// Commands on the root chain: history, undo, redo, revert and prune.
import ChronoStoreEngine

extension Command {
    static let history = Command(
        name: "history", positionals: [.required("STORE")],
        options: [
            .flag("all-branches", "also list roots on side branches (left behind by undo then commit)"),
            .value("limit", "N", "print only the newest N roots of the listing"),
            .value("before", "ROOT", "continue the listing after ROOT (the last root of the previous page)"),
        ],
        summary: "list the retained roots, newest first",
        details: """
            Lists the head and the retained roots before it on its line, newest first: id, parent,
            commit time (ISO-8601, UTC), label, and the snapshots pinning it. "*" marks the head.
            With --all-branches every retained root is listed, side branches included.
            --limit N prints the first N rows of that listing, in the same shape, without reading
            the rest; --before ROOT starts after ROOT (on the head's line: ROOT's ancestors; with
            --all-branches: roots with smaller ids). Exits 1 when ROOT is not retained.
            With --json prints [{"id":..,"parent":..,"time":..,"label":..,"head":bool,"snapshots":[..]}, ...].
            """,
        examples: [
            "chrono history notes.chrono", "chrono history notes.chrono --all-branches --json",
            "chrono history notes.chrono --limit 20 --before 1234",
        ],
        run: runHistory)

    static let undo = Command(
        name: "undo", positionals: [.required("STORE")],
        options: [.value("steps", "N", "go back N roots (default 1)")],
        summary: "move the head back to an earlier root (redo can return)",
        details: """
            Moves the head back N roots along its line and prints the new head. Nothing is lost:
            redo moves forward again, and a new commit after an undo starts a branch. Fails (exit
            4) when the head's line has fewer than N retained roots before it.
            """,
        examples: ["chrono undo notes.chrono", "chrono undo notes.chrono --steps 3"],
        run: runUndo)

    static let redo = Command(
        name: "redo", positionals: [.required("STORE")],
        summary: "move the head forward to the root it was undone from",
        details: "Moves the head forward to the root the last undo left and prints it. Fails (exit 4) when there is nothing to redo.",
        examples: ["chrono redo notes.chrono"],
        run: runRedo)

    static let revert = Command(
        name: "revert", positionals: [.required("STORE"), .required("ROOT")],
        options: [.value("label", "TEXT", "name the new commit")],
        summary: "commit a new root whose contents equal an older root's",
        details: """
            Commits a new root whose collections equal ROOT's (history is kept: the revert is
            itself a commit, so it can be undone). Exits 1 when ROOT is not retained.
            """,
        examples: ["chrono revert notes.chrono 3 --label \"Back to Monday\""],
        run: runRevert)

    static let prune = Command(
        name: "prune", positionals: [.required("STORE")],
        options: [
            .value("keep-last", "N", "keep the head and the N-1 roots before it from now on"),
            .value("older-than", "DAYS", "from now on, drop roots older than DAYS days"),
        ],
        summary: "set the retention policy and drop the roots it no longer keeps",
        details: """
            With --keep-last or --older-than, first makes that the store's retention policy; then
            drops every root the policy does not keep and frees their pages. Snapshots are always
            kept. Prints how many roots were dropped and how many remain.
            """,
        examples: ["chrono prune notes.chrono --keep-last 10", "chrono prune notes.chrono --older-than 30"],
        run: runPrune)

    private static func runHistory(_ invocation: Invocation) throws {
        let limit = try invocation.integer("limit", in: 1...Int(Int32.max))
        let before = try invocation.option("before").map { try RootArgument.id($0, named: "--before") }
        let items = try invocation.withStore(readOnly: true) {
            try $0.history(allBranches: invocation.flag("all-branches"), limit: limit, before: before)
        }
        if invocation.prefersJSON {
            invocation.console.print(.array(items.map(historyDocument)))
            return
        }
        invocation.console.print("  ROOT  PARENT  TIME                      LABEL")
        for item in items { invocation.console.print(historyLine(item)) }
    }

    private static func historyDocument(_ item: HistoryItem) -> JSONValue {
        .object([
            ("id", .id(item.id)),
            ("parent", item.parent.map(JSONValue.id) ?? .null),
            ("time", .string(Timestamp.text(milliseconds: item.timeMilliseconds))),
            ("label", .optional(item.label)),
            ("head", .bool(item.isHead)),
            ("snapshots", .array(item.snapshots.map(JSONValue.string))),
        ])
    }

    private static func historyLine(_ item: HistoryItem) -> String {
        func column(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(1, width - text.count)) }
        var line = (item.isHead ? "* " : "  ") + column(String(item.id.rawValue), 6)
        line += column(item.parent.map { String($0.rawValue) } ?? "-", 8)
        line += column(Timestamp.text(milliseconds: item.timeMilliseconds), 26)
        line += item.label ?? "(no label)"
        if let source = item.revertedTo { line += "  (revert to \(source.rawValue))" }
        if item.isBranchTip { line += "  (branch tip)" }
        if !item.snapshots.isEmpty { line += "  [snapshot: " + item.snapshots.joined(separator: ", ") + "]" }
        return line
    }

    private static func runUndo(_ invocation: Invocation) throws {
        let steps = try invocation.integer("steps", in: 1...Int(Int32.max)) ?? 1
        let root = try invocation.withStore { try $0.undo(steps: steps) }
        invocation.reportHead(root, "Undid \(steps) step\(steps == 1 ? "" : "s"); root \(root.rawValue) is the head.")
    }

    private static func runRedo(_ invocation: Invocation) throws {
        let root = try invocation.withStore { try $0.redo() }
        invocation.reportHead(root, "Redid; root \(root.rawValue) is the head.")
    }

    private static func runRevert(_ invocation: Invocation) throws {
        let target = try RootArgument.id(invocation.positional("ROOT"), named: "ROOT")
        let label = try invocation.label()
        let root = try invocation.withStore { try $0.revert(to: target, label: label) }
        invocation.reportHead(
            root, "Committed root \(root.rawValue) with the contents of root \(target.rawValue); it is the head.")
    }

    private static func runPrune(_ invocation: Invocation) throws {
        let keepLast = try invocation.integer("keep-last", in: 1...RetentionPolicy.maximumRootCount)
        let olderThan = try invocation.integer("older-than", in: 0...RetentionPolicy.maximumDays)
        if keepLast != nil && olderThan != nil { throw CommandFailure.usage("give --keep-last or --older-than, not both") }
        let policy: RetentionPolicy? = keepLast.map(RetentionPolicy.lastRoots) ?? olderThan.map(RetentionPolicy.days)
        let (dropped, state) = try invocation.withStore { store in
            if let policy { try store.setRetention(policy) }
            let dropped = try store.prune()
            return (dropped, try store.snapshot.state)
        }
        if invocation.prefersJSON {
            invocation.console.print(.object([
                ("dropped", .count(dropped)), ("retainedRoots", .count(state.retainedRootCount)),
                ("retention", .string(state.retention.description)),
            ]))
        } else {
            invocation.console.print(
                "Dropped \(dropped) root\(dropped == 1 ? "" : "s"); \(state.retainedRootCount) retained (retention \(state.retention)).")
        }
    }
}
