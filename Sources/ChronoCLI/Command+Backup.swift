// Backup and restore: copy one root into a self-contained store file, and bring one back, either
// as an undoable commit or by replacing the whole store.
import ChronoStoreEngine
import Foundation

extension Command {
    static let backup = Command(
        name: "backup", positionals: [.required("STORE"), .required("DEST")],
        options: [
            .value("at", "ROOT|DATE", "back up an older root: its id, or the root that was the head at an ISO-8601 date"),
            .value("snapshot", "NAME", "back up the root a snapshot pins"),
            .flag("with-history", "copy every retained root, branch and snapshot, not just one root"),
        ],
        summary: "copy one root into a new, self-contained store file",
        details: """
            Writes a new store file at DEST holding only the pages live in one root: the head, or
            the root named by --at or --snapshot (not both). The backup is a store of its own:
            every chrono command reads it without STORE, and 'chrono restore' brings it back. It is
            written under a temporary name, synced, then renamed, so DEST is either complete or
            absent, even after Ctrl-C; writers to STORE are not blocked meanwhile. Prints what was
            written (with --json {"root":ID,"pages":N,"bytes":N,"path":DEST}, where root is the
            root copied). Shows a progress bar on stderr when stderr is a terminal.
            With --with-history the backup holds every retained root (labels, times, branches,
            redo targets) and every snapshot, with the head where it was; root ids are the
            backup's own. --with-history cannot be combined with --at or --snapshot.
            Exits 4, writing nothing, when something already exists at DEST (as create does) or
            STORE is missing; exits 1 when the root or snapshot does not exist.
            """,
        examples: [
            "chrono backup notes.chrono notes-backup.chrono",
            "chrono backup notes.chrono before-import.chrono --snapshot before-import --json",
            "chrono backup notes.chrono march.chrono --at 2026-03-31T23:59:59Z",
            "chrono backup notes.chrono everything.chrono --with-history",
        ],
        run: runBackup)

    static let restore = Command(
        name: "restore", positionals: [.required("STORE"), .required("BACKUP")],
        options: [
            .value("label", "TEXT", "name the restoring commit (default \"Restore\")"),
            .flag("replace", "replace the whole store file, history included, with the backup"),
        ],
        summary: "make a backup's contents the head (undoable), or replace the store",
        details: """
            Reads and checks every page of BACKUP, then commits its contents as the new head of
            STORE. The store's history is kept, so 'chrono undo STORE' brings back the head from
            before the restore. Prints the new head (with --json {"root":ID}). Shows a progress bar
            on stderr when stderr is a terminal.
            With --replace, for disaster recovery, the whole STORE file, its history included, is
            replaced by a copy of the checked backup; this cannot be undone, and it refuses (exit 4)
            while another process has STORE open. Prints the replaced store's head. STORE must be
            there already; to recreate a lost store, run 'chrono verify BACKUP' and copy BACKUP
            into place.
            Exits 3, changing nothing, when BACKUP fails its check; 4 when STORE or BACKUP is
            missing.
            """,
        examples: [
            "chrono restore notes.chrono notes-backup.chrono --label \"Back to Monday\"",
            "chrono restore notes.chrono notes-backup.chrono --json && chrono undo notes.chrono",
            "chrono restore notes.chrono notes-backup.chrono --replace",
        ],
        run: runRestore)

    // MARK: - backup

    private static func runBackup(_ invocation: Invocation) throws {
        let selector = try backupSelector(invocation)
        let withHistory = invocation.flag("with-history")
        if withHistory && selector != .head { throw CommandFailure.usage("--with-history copies every root: drop --at and --snapshot") }
        let destination = invocation.positional("DEST")
        try requireDirectory(containing: destination)
        let progress = ProgressLine(console: invocation.console, title: "backup", unit: "pages")
        let report = try Interruption.catching {
            try invocation.withStore(readOnly: true) { store in
                defer { progress.finish() }
                let onStep: (BackupProgress) throws -> Void = { step in
                    try Interruption.check("no backup was written")
                    progress.update(done: step.pagesDone, total: step.pagesTotal)
                }
                if withHistory { return try store.backupWithHistory(to: destination, progress: onStep) }
                return try store.backup(to: destination, of: selector, progress: onStep)
            }
        }
        if invocation.prefersJSON {
            invocation.console.print(.object([
                ("root", .id(report.root)), ("pages", .count(report.pageCount)), ("bytes", .count(report.byteCount)),
                ("path", .string(destination)),
            ]))
        } else {
            let what = withHistory ? "every retained root and snapshot (head: root \(report.root.rawValue))" : describe(selector, root: report.root)
            invocation.console.print(
                "Backed up \(what) to \(destination): \(report.pageCount) pages of data in a "
                    + "\(report.byteCount)-byte file, a store of its own. 'chrono restore' brings it back.")
        }
    }

    /// The root to back up: `--snapshot NAME`, `--at ROOT|DATE`, or the head.
    private static func backupSelector(_ invocation: Invocation) throws -> RootSelector {
        let snapshot = invocation.option("snapshot")
        if invocation.option("at") != nil, snapshot != nil { throw CommandFailure.usage("give --at or --snapshot, not both") }
        guard let snapshot else { return try RootArgument.selector(invocation.option("at")) }
        guard !snapshot.isEmpty else { throw CommandFailure.usage("--snapshot needs a snapshot name") }
        return .snapshot(snapshot)
    }

    private static func describe(_ selector: RootSelector, root: TransactionID) -> String {
        switch selector {
        case .head: return "the head, root \(root.rawValue),"
        case .snapshot(let name): return "snapshot \"\(name)\", root \(root.rawValue),"
        case .root, .time: return "root \(root.rawValue)"
        }
    }

    // MARK: - restore

    private static func runRestore(_ invocation: Invocation) throws {
        let label = try invocation.label()
        let backupPath = invocation.positional("BACKUP")
        if invocation.flag("replace") {
            guard label == nil else { throw CommandFailure.usage("--label names a restoring commit, and --replace commits nothing") }
            return try runReplace(invocation, backupPath: backupPath)
        }
        let progress = ProgressLine(console: invocation.console, title: "restore", unit: "pages")
        let root = try Interruption.catching {
            try invocation.withStore { store in
                try requireBackup(at: backupPath)
                defer { progress.finish() }
                return try store.restore(fromBackup: backupPath, label: label) { step in
                    try Interruption.check("the store is unchanged")
                    progress.update(done: step.pagesDone, total: step.pagesTotal)
                }
            }
        }
        invocation.reportHead(
            root, "Restored \(backupPath) into \(invocation.storePath): root \(root.rawValue) is the head. "
                + "'chrono undo \(invocation.storePath)' brings back the head from before.")
    }

    /// `restore --replace`: swaps the whole store file for the checked backup, offline.
    private static func runReplace(_ invocation: Invocation, backupPath: String) throws {
        let storePath = invocation.storePath
        try refuseUnlessStore(at: storePath)
        try requireBackup(at: backupPath)
        try Store.replaceStore(at: storePath, withBackup: backupPath)
        let head = try invocation.withStore { try $0.snapshot.head.transaction }
        invocation.reportHead(
            head, "Replaced \(storePath) with a copy of \(backupPath): root \(head.rawValue) is the head, and the store's "
                + "earlier history is gone.")
    }

    /// Fails unless a ChronoStore file is at `path`. A store too damaged to open still counts:
    /// replacing one is what `--replace` is for; a file of some other kind is never replaced.
    private static func refuseUnlessStore(at path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no store at \(path)", exitCode: .failure)
        }
        do {
            try Store.open(at: path).close()
        } catch StoreError.notAStore {
            throw CommandFailure("\(path) is not a ChronoStore file; --replace only replaces a store", exitCode: .failure)
        } catch {
            return
        }
    }

    /// Fails, before the store is opened, when the directory `path` would go in is missing.
    private static func requireDirectory(containing path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard directory.isEmpty || (FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue)
        else { throw CommandFailure("no directory \(directory) to write the backup in", exitCode: .failure) }
    }

    private static func requireBackup(at path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure("no backup at \(path)", exitCode: .failure)
        }
    }
}
