// Commands on records: put, get, delete and list.
import ChronoStore
import ChronoStoreEngine

extension Command {
    static let put = Command(
        name: "put", positionals: [.required("STORE"), .required("COLLECTION"), .required("KEY"), .required("JSON")],
        options: [
            .value("label", "TEXT", "name the transaction (shown by history)"),
            .flag("raw", "write into a typed datastore anyway (its app will not decode the value)"),
        ],
        summary: "store a JSON value under a key (one transaction)",
        details: """
            Stores the JSON document under KEY in COLLECTION, creating the collection if needed, in
            one durable transaction. Prints the new root (the new head). The value is checked before
            the store is opened: text that is not JSON is refused (exit 2) and nothing is written.
            A COLLECTION that is a datastore of the typed ChronoStore API is refused too (exit 2,
            nothing written): its records are the app's encoded instances, which a JSON value is
            not. --raw writes anyway (KEY as get takes it); the app then fails to load that one
            record, with an error naming it, and loads the others.
            """,
        examples: [
            "chrono put notes.chrono notes note-1 '{\"title\":\"Buy milk\"}' --label \"Add a note\"",
            "chrono put notes.chrono settings theme '\"dark\"'",
        ],
        run: runPut)

    static let get = Command(
        name: "get", positionals: [.required("STORE"), .required("COLLECTION"), .required("KEY")],
        options: [.value("at", "ROOT|DATE", "read an older root: its id, or the root that was the head at an ISO-8601 date")],
        summary: "print the JSON value stored under a key",
        details: """
            Prints the value document under KEY (the same with or without --json). Exits 1 when the
            key, or the root named by --at, does not exist. In a datastore of the typed API, KEY is
            the identifier as list shows it: JSON such as 42, "a" (or just a), a UUID or ISO-8601
            date string, or an array for a tuple identifier.
            """,
        examples: [
            "chrono get notes.chrono notes note-1",
            "chrono get notes.chrono notes note-1 --at 3",
            "chrono get notes.chrono notes note-1 --at 2026-03-01T09:30:00Z",
        ],
        run: runGet)

    static let delete = Command(
        name: "delete", positionals: [.required("STORE"), .required("COLLECTION"), .required("KEY")],
        options: [.value("label", "TEXT", "name the transaction (shown by history)")],
        summary: "remove a key (one transaction)",
        details: """
            Removes KEY from COLLECTION in one durable transaction and prints the new root. Exits 1,
            writing nothing, when the key does not exist. In a datastore of the typed API, KEY is the
            identifier as list shows it (see get), and the record's index entries go with it.
            """,
        examples: ["chrono delete notes.chrono notes note-1"],
        run: runDelete)

    static let list = Command(
        name: "list", positionals: [.required("STORE"), .required("COLLECTION")],
        options: [
            .value("at", "ROOT|DATE", "list an older root"),
            .value("from", "KEY", "start at this key (inclusive)"),
            .value("to", "KEY", "stop at this key (inclusive)"),
            .flag("reverse", "newest-key first: descending key order"),
            .value("limit", "N", "print at most N entries"),
        ],
        summary: "print the entries of a collection in key order",
        details: """
            Prints one entry per line, KEY, a tab, then the JSON value, in key order (UTF-8 byte
            order), or descending with --reverse. A backslash, tab, newline or carriage return in a
            key prints as \\\\, \\t, \\n or \\r, so each line splits at its first tab.
            With --json prints [{"key":..,"value":..}, ...] (keys as JSON strings, unescaped).
            A collection that does not exist lists as empty.
            In a datastore of the typed API, keys are its identifiers decoded as JSON (numbers,
            strings, UUID and ISO-8601 date strings, arrays for tuples; {"$hex":..} for an
            app-defined key type), in the plain output and as JSON values with --json; --from and
            --to take the same form.
            """,
        examples: [
            "chrono list notes.chrono notes",
            "chrono list notes.chrono notes --from note-1 --to note-9 --reverse --limit 3 --json",
        ],
        run: runList)

    /// A collection name and key from the command line, checked before the store is opened.
    /// The key bytes are its UTF-8 text; in a typed datastore ``KeyForm`` reads it instead.
    private static func names(_ invocation: Invocation) throws -> (collection: String, key: [UInt8]) {
        let collection = invocation.positional("COLLECTION")
        let byteCount = collection.utf8.count
        guard (1...255).contains(byteCount) else {
            throw CommandFailure.usage("COLLECTION must be 1 to 255 bytes of UTF-8, not \(byteCount)")
        }
        let key = Array(invocation.positional("KEY").utf8)
        guard !key.isEmpty else { throw CommandFailure.usage("KEY must not be empty") }
        return (collection, key)
    }

    private static func runPut(_ invocation: Invocation) throws {
        let (collection, _) = try names(invocation)
        let value = try StoredValue.bytes(forJSON: invocation.positional("JSON"))
        let label = try invocation.label()
        let raw = invocation.flag("raw")
        let root = try invocation.withStore { store in
            let (_, root) = try store.write(label: label) { transaction in
                try KeyForm.refuseTypedWrite(to: collection, raw: raw, in: transaction)
                let key = try KeyForm.of(collection, in: transaction).bytes(invocation.positional("KEY"))
                try transaction.put(key, value, in: collection)
            }
            return try root ?? store.snapshot.head.transaction
        }
        invocation.reportHead(root, "Stored \(collection)/\(invocation.positional("KEY")); root \(root.rawValue) is the head.")
    }

    private static func runGet(_ invocation: Invocation) throws {
        let (collection, _) = try names(invocation)
        let selector = try RootArgument.selector(invocation.option("at"))
        let value = try invocation.withReader(at: selector) { reader in
            let key = try KeyForm.of(collection, in: reader).bytes(invocation.positional("KEY"))
            return try reader.value(forKey: key, in: collection)
        }
        guard let value else { throw missingKey(invocation) }
        invocation.console.print(StoredValue.document(value))
    }

    private static func runDelete(_ invocation: Invocation) throws {
        let (collection, _) = try names(invocation)
        let label = try invocation.label()
        let root = try invocation.withStore { store in
            let (_, root) = try store.write(label: label) { transaction in
                let form = try KeyForm.of(collection, in: transaction)
                let key = try form.bytes(invocation.positional("KEY"))
                let deleted =
                    form.isDatastore
                    ? try TypedCollection.deleteRecord(key, from: collection, in: transaction)
                    : try transaction.delete(key, in: collection)
                guard deleted else { throw missingKey(invocation) }
            }
            return try root ?? store.snapshot.head.transaction
        }
        invocation.reportHead(root, "Deleted \(collection)/\(invocation.positional("KEY")); root \(root.rawValue) is the head.")
    }

    private static func missingKey(_ invocation: Invocation) -> CommandFailure {
        .notFound("no key \"\(invocation.positional("KEY"))\" in collection \"\(invocation.positional("COLLECTION"))\"")
    }

    private static func runList(_ invocation: Invocation) throws {
        let collection = invocation.positional("COLLECTION")
        let selector = try RootArgument.selector(invocation.option("at"))
        let limit = try invocation.integer("limit", in: 0...Int.max) ?? Int.max
        var entries: [(key: JSONValue, text: String, value: JSONValue)] = []
        try invocation.withReader(at: selector) { reader in
            let form = try KeyForm.of(collection, in: reader)
            let range = KeyRange(
                lower: try invocation.option("from").map { KeyBound(try form.bytes($0), inclusive: true) },
                upper: try invocation.option("to").map { KeyBound(try form.bytes($0), inclusive: true) })
            guard limit > 0 else { return }
            try reader.scan(collection, range: range, reverse: invocation.flag("reverse")) { key, value in
                entries.append((form.json(key), form.display(key), StoredValue.document(value)))
                return entries.count < limit
            }
        }
        if invocation.prefersJSON {
            invocation.console.print(.array(entries.map { .object([("key", $0.key), ("value", $0.value)]) }))
        } else {
            for entry in entries { invocation.console.print(StoredValue.plainKey(entry.text) + "\t" + entry.value.serialized()) }
        }
    }
}
