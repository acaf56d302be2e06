// Snapshot commands: create, list, delete and checkout named, pinned roots.
import ChronoStoreEngine

extension Command {
    static let snapshotCreate = Command(
        name: "snapshot create", positionals: [.required("STORE"), .required("NAME")],
        summary: "pin the head under a name; retention never drops it",
        details: """
            Names the head root NAME and pins it: pruning keeps it until the snapshot is deleted.
            Prints the snapshot (with --json {"name":..,"root":..,"time":..,"records":..}).
            Fails (exit 4) when a snapshot of that name exists.
            """,
        examples: ["chrono snapshot create notes.chrono before-import"],
        run: runSnapshotCreate)

    static let snapshotList = Command(
        name: "snapshot list", positionals: [.required("STORE")],
        summary: "list the snapshots by name",
        details: "Lists each snapshot's name, root, time and record count, sorted by name (with --json, an array of objects).",
        examples: ["chrono snapshot list notes.chrono --json"],
        run: runSnapshotList)

    static let snapshotDelete = Command(
        name: "snapshot delete", positionals: [.required("STORE"), .required("NAME")],
        summary: "remove a snapshot (its root becomes prunable)",
        details: "Removes the snapshot NAME; its root is then kept only as long as retention keeps it. Exits 1 when there is no such snapshot.",
        examples: ["chrono snapshot delete notes.chrono before-import"],
        run: runSnapshotDelete)

    static let snapshotCheckout = Command(
        name: "snapshot checkout", positionals: [.required("STORE"), .required("NAME")],
        options: [.value("label", "TEXT", "name the new commit")],
        summary: "make a snapshot's contents the head (a new, undoable commit)",
        details: """
            Commits a new head whose contents equal the snapshot's root; later writes continue from
            there, and undo returns to where the head was. Exits 1 when there is no such snapshot.
            """,
        examples: ["chrono snapshot checkout notes.chrono before-import --label \"Undo the import\""],
        run: runSnapshotCheckout)

    private static func snapshotName(_ invocation: Invocation) throws -> String {
        let name = invocation.positional("NAME")
        guard !name.isEmpty else { throw CommandFailure.usage("NAME must not be empty") }
        return name
    }

    private static func snapshotDocument(_ snapshot: SnapshotInfo) -> JSONValue {
        .object([
            ("name", .string(snapshot.name)), ("root", .id(snapshot.root)),
            ("time", .string(Timestamp.text(milliseconds: snapshot.timeMilliseconds))),
            ("records", .count(snapshot.recordCount)),
        ])
    }

    private static func snapshotLine(_ snapshot: SnapshotInfo) -> String {
        let records = "\(snapshot.recordCount) record\(snapshot.recordCount == 1 ? "" : "s")"
        return "\(snapshot.name)\troot \(snapshot.root.rawValue)\t\(Timestamp.text(milliseconds: snapshot.timeMilliseconds))\t\(records)"
    }

    private static func runSnapshotCreate(_ invocation: Invocation) throws {
        let name = try snapshotName(invocation)
        let snapshot = try invocation.withStore { try $0.createSnapshot(named: name) }
        if invocation.prefersJSON {
            invocation.console.print(snapshotDocument(snapshot))
        } else {
            invocation.console.print(
                "Snapshot \"\(snapshot.name)\" pins root \(snapshot.root.rawValue) (\(snapshot.recordCount) record\(snapshot.recordCount == 1 ? "" : "s")).")
        }
    }

    private static func runSnapshotList(_ invocation: Invocation) throws {
        let snapshots = try invocation.withStore { try $0.snapshots() }
        if invocation.prefersJSON {
            invocation.console.print(.array(snapshots.map(snapshotDocument)))
        } else {
            for snapshot in snapshots { invocation.console.print(snapshotLine(snapshot)) }
        }
    }

    private static func runSnapshotDelete(_ invocation: Invocation) throws {
        let name = try snapshotName(invocation)
        try invocation.withStore { try $0.deleteSnapshot(named: name) }
        if invocation.prefersJSON {
            invocation.console.print(.object([("deleted", .string(name))]))
        } else {
            invocation.console.print("Deleted snapshot \"\(name)\".")
        }
    }

    private static func runSnapshotCheckout(_ invocation: Invocation) throws {
        let name = try snapshotName(invocation)
        let label = try invocation.label()
        let root = try invocation.withStore { try $0.checkoutSnapshot(named: name, label: label) }
        invocation.reportHead(root, "Checked out snapshot \"\(name)\": root \(root.rawValue) is the head.")
    }
}
