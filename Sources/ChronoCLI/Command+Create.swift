// The create command: a new, empty store with a page size and a retention policy.
import ChronoStoreEngine

extension Command {
    static let create = Command(
        name: "create", positionals: [.required("STORE")],
        options: [
            .value("page-size", "N", "bytes per page: a power of two from 4096 to 65536 (default 4096)"),
            .value("retention", "last:N|days:N|all", "history to keep: the last N roots, N days, or all (default last:1000)"),
            .flag("secure-delete", "overwrite every freed page with zeros (every commit then syncs)"),
        ],
        summary: "create a new, empty store",
        details: """
            Creates a store file at STORE holding one empty root (root 1), so the first real
            commit can be undone back to an empty store. Refuses (exit 4), touching nothing, when
            anything already exists at STORE. A lock file STORE.lock appears beside it when opened.
            With --secure-delete, pages that deletes, pruning, clearing history or compaction free
            are overwritten with zeros before the commit that frees them returns (once no reader
            of an older state remains); the setting is kept in the store.
            """,
        examples: [
            "chrono create notes.chrono", "chrono create big.chrono --page-size 16384 --retention days:30",
            "chrono create journal.chrono --secure-delete",
        ],
        run: runCreate)

    private static func runCreate(_ invocation: Invocation) throws {
        var options = StoreOptions()
        if let pageSize = try invocation.integer("page-size", in: 4096...65536) {
            guard pageSize & (pageSize - 1) == 0 else {
                throw CommandFailure.usage("--page-size must be a power of two from 4096 to 65536, not \(pageSize)")
            }
            options.pageSize = pageSize
        }
        if let text = invocation.option("retention") { options.retention = try retention(text) }
        options.secureDelete = invocation.flag("secure-delete")
        let store = try Store.create(at: invocation.storePath, options: options)
        let (head, state) = try (store.snapshot.head.transaction, store.snapshot.state)
        try store.close()
        if invocation.prefersJSON {
            invocation.console.print(.object([
                ("root", .id(head)), ("path", .string(invocation.storePath)), ("pageSize", .count(store.pageSize)),
                ("retention", .string(state.retention.description)), ("secureDelete", .bool(state.secureDelete)),
            ]))
        } else {
            invocation.console.print(
                "Created \(invocation.storePath) (\(store.pageSize)-byte pages, retention \(state.retention)"
                    + (state.secureDelete ? ", secure delete" : "") + "); root \(head.rawValue), empty, is the head.")
        }
    }

    /// Parses `last:N`, `days:N` or `all`.
    static func retention(_ text: String) throws -> RetentionPolicy {
        if text == "all" { return .limitless }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        if parts.count == 2, let count = Int(parts[1]) {
            let policy: RetentionPolicy? = parts[0] == "last" ? .lastRoots(count) : parts[0] == "days" ? .days(count) : nil
            if let policy, count >= 1, (try? policy.validate()) != nil { return policy }
        }
        throw CommandFailure.usage(
            "--retention must be last:N (N from 1 to \(RetentionPolicy.maximumRootCount)), "
                + "days:N (N from 1 to \(RetentionPolicy.maximumDays)) or all, not '\(text)'")
    }
}
