// The steps of `chrono demo`: each one does something to a fresh store and says what it did.
import ChronoStoreEngine

/// A scripted tour of a new store. Every step prints what it did in plain words and the
/// `chrono` command that does the same, so the reader can repeat it by hand.
struct DemoTour {
    let path: String
    /// Where the backup step writes its backup.
    let backupPath: String
    let store: Store
    let console: Console
    let narrates: Bool

    /// Creates the store at `path`.
    /// - Throws: ``StoreError/storeAlreadyExists(path:)`` when something is there already.
    init(path: String, backupPath: String, console: Console, narrates: Bool) throws {
        self.path = path
        self.backupPath = backupPath
        self.console = console
        self.narrates = narrates
        self.store = try Store.create(at: path, options: StoreOptions(retention: .limitless))
    }

    /// Runs every step and closes the store. Returns the final head.
    func run() throws -> TransactionID {
        defer { try? store.close() }
        say("1. Created a store at \(path).", "chrono create \(path) --retention all")
        say("   It starts with one empty root, root 1, so even the first commit can be undone.")
        try commitNotes()
        try showHistory(allBranches: false)
        try undoAndRedo()
        try takeSnapshot()
        try makeBranch()
        try backUp()
        try showHistory(allBranches: true)
        try verify()
        let head = try store.snapshot.head.transaction
        try store.close()
        say("")
        say("The store and its backup are still there. Try: chrono history \(path) --all-branches")
        say("                                           or: chrono list \(backupPath) notes --json")
        return head
    }

    private func commitNotes() throws {
        let first = try put([("note-1", #"{"title":"Buy milk"}"#), ("note-2", #"{"title":"Call Sam"}"#)], label: "Add two notes")
        say("2. Committed root \(first.rawValue), labelled \"Add two notes\": two records in the collection \"notes\".",
            "chrono put \(path) notes note-1 '{\"title\":\"Buy milk\"}' --label \"Add two notes\"")
        let second = try put([("note-1", #"{"title":"Buy milk","done":true}"#)], label: "Finish a note")
        say("   Committed root \(second.rawValue), \"Finish a note\": note-1 now has \"done\": true.")
        let third = try put([("note-3", #"{"title":"Water the plants"}"#)], label: "Add a third note")
        say("   Committed root \(third.rawValue), \"Add a third note\". Each commit wrote new pages and a new root;",
            "chrono get \(path) notes note-1 --at \(first.rawValue)")
        say("   no page was overwritten, so every older root can still be read.")
    }

    private func undoAndRedo() throws {
        let undone = try store.undo()
        say("4. Undo moved the head back to root \(undone.rawValue): note-3 is \(try noteState("note-3")).", "chrono undo \(path)")
        let redone = try store.redo()
        say("   Redo moved it forward again to root \(redone.rawValue): note-3 is \(try noteState("note-3")).",
            "chrono redo \(path)")
        say("   Undo and redo only move the head; they write no records.")
    }

    private func takeSnapshot() throws {
        let snapshot = try store.createSnapshot(named: "three-notes")
        say("5. Took the snapshot \"three-notes\": it pins root \(snapshot.root.rawValue) (\(snapshot.recordCount) records),",
            "chrono snapshot create \(path) three-notes")
        say("   so pruning never drops it, and it can be read or checked out later.")
    }

    private func makeBranch() throws {
        let base = try store.undo()
        let branch = try put([("note-4", #"{"title":"Book a table"}"#)], label: "Add a different note")
        say("6. Undid back to root \(base.rawValue), then committed root \(branch.rawValue), \"Add a different note\".",
            "chrono undo \(path) && chrono put \(path) notes note-4 '{\"title\":\"Book a table\"}'")
        say("   That started a branch: the head's line no longer has note-3, but the old line is kept")
        let pinned = try store.beginRead(at: .snapshot("three-notes"))
        defer { pinned.close() }
        let count = try pinned.count(in: "notes")
        say("   as a side branch, and the snapshot still reads \(count) notes there, note-3 included.",
            "chrono get \(path) notes note-3 --at \(pinned.root.transaction.rawValue)")
    }

    private func showHistory(allBranches: Bool) throws {
        let step = allBranches ? "8. The history with every branch" : "3. The history, newest first"
        say("\(step) (\"*\" marks the head):", "chrono history \(path)" + (allBranches ? " --all-branches" : ""))
        for item in try store.history(allBranches: allBranches) {
            let marks = (item.isBranchTip ? "  (branch tip)" : "")
                + (item.snapshots.isEmpty ? "" : "  [snapshot: " + item.snapshots.joined(separator: ", ") + "]")
            say("     \(item.isHead ? "*" : " ") root \(item.id.rawValue)  \(item.label ?? (item.id.rawValue == 1 ? "(the empty first root)" : "(no label)"))\(marks)")
        }
    }

    private func backUp() throws {
        let report = try store.backup(to: backupPath)
        say("7. Backed up the head, root \(report.root.rawValue), into \(backupPath): copied \(report.pageCount) pages of records,",
            "chrono backup \(path) \(backupPath)")
        say("   making a \(report.byteCount)-byte store of its own that holds the head's records and none of the history.")
        let backup = try Store.open(at: backupPath)
        defer { try? backup.close() }
        let check = try backup.verify()
        let notes = try backup.read { try $0.count(in: "notes") }
        try backup.close()
        say("   Opened the backup and verified it: \(check.pagesChecked) pages checked, \(check.isSound ? "all sound" : "found damage"); it holds \(notes) notes.",
            "chrono verify \(backupPath)")
        say("   Restoring it would be a new commit, so even a restore can be undone.", "chrono restore \(path) \(backupPath)")
    }

    private func verify() throws {
        let report = try store.verify()
        say("9. Verified the store: read and checked \(report.pagesChecked) pages, \(report.isSound ? "all sound" : "found damage").",
            "chrono verify \(path)")
    }

    /// Commits `records` to the "notes" collection in one labelled transaction.
    private func put(_ records: [(String, String)], label: String) throws -> TransactionID {
        let (_, root) = try store.write(label: label) { transaction in
            for (key, json) in records { try transaction.put(Array(key.utf8), Array(json.utf8), in: "notes") }
        }
        return try root ?? store.snapshot.head.transaction
    }

    private func noteState(_ key: String) throws -> String {
        try store.read { try $0.value(forKey: Array(key.utf8), in: "notes") } == nil ? "gone" : "back"
    }

    /// Prints a line of the tour, and the equivalent command beneath it.
    private func say(_ line: String, _ command: String? = nil) {
        guard narrates else { return }
        console.print(line)
        if let command { console.print("     $ " + command) }
    }
}
