// The apply command: JSON lines on stdin, one durable transaction per line.
import ChronoStore
import ChronoStoreEngine

extension Command {
    static let apply = Command(
        name: "apply", positionals: [.required("STORE")],
        options: [
            .value("label", "TEXT", "name every transaction this run commits"),
            .flag("raw", "write into typed datastores anyway (their apps will not decode the values)"),
        ],
        summary: "commit JSON lines from stdin, one transaction per line",
        details: """
            Reads JSON lines from stdin. Each line is one transaction: {"put":{"c":COLLECTION,
            "k":KEY,"v":VALUE}}, {"delete":{"c":COLLECTION,"k":KEY}}, or an array of those to
            commit together. Blank lines are skipped. After each line's commit is durable, prints
            the new root id on its own line (with --json, {"root":ID}) and flushes, so a printed id
            is safe to rely on.
            A line that is not such JSON stops the run with exit 2, naming the line; a delete of a
            missing key stops it with exit 1. Either way the lines before it stay committed and the
            bad line writes nothing.
            A line writing into a datastore of the typed ChronoStore API is refused the same way
            (exit 2) unless --raw is given: see put. With --raw, "k" names such a record as get
            takes it ("42", "[\"Oslo\",10]"), and a delete removes its index entries too.
            """,
        examples: [
            #"echo '{"put":{"c":"notes","k":"n1","v":{"title":"Hi"}}}' | chrono apply notes.chrono"#,
            #"printf '%s\n' '[{"put":{"c":"a","k":"x","v":1}},{"delete":{"c":"a","k":"y"}}]' | chrono apply s.chrono --label Batch"#,
        ],
        run: runApply)

    private static func runApply(_ invocation: Invocation) throws {
        let label = try invocation.label()
        let raw = invocation.flag("raw")
        let progress = ProgressLine(console: invocation.console, title: "apply", unit: "transactions")
        defer { progress.finish() }
        try invocation.withStore { store in
            var input = InputLines()
            var committed = 0
            while let line = try input.next() {
                guard line.contains(where: { !$0.isWhitespace }) else { continue }
                let root = try applyLine(line, number: input.lineNumber, label: label, raw: raw, to: store)
                committed += 1
                invocation.reportHead(root, String(root.rawValue))
                try invocation.console.flush()
                if committed >= 100 { progress.update(done: committed, total: nil) }
            }
        }
    }

    /// Commits one line's operations; failures name the line.
    private static func applyLine(_ line: String, number: Int, label: String?, raw: Bool, to store: Store) throws -> TransactionID {
        do {
            let operations = try ApplyOperation.parse(line: line)
            let (_, root) = try store.write(label: label) { transaction in
                for operation in operations {
                    try KeyForm.refuseTypedWrite(to: operation.collection, raw: raw, in: transaction)
                    try perform(operation, in: transaction)
                }
            }
            return try root ?? store.snapshot.head.transaction
        } catch let error as LineError {
            throw CommandFailure("line \(number): \(error)", exitCode: .usage)
        } catch {
            var failure = CommandFailure(error)
            failure.message = "line \(number): \(failure.message)"
            failure.showsUsage = false
            throw failure
        }
    }

    /// Performs one operation. In a typed datastore (written with --raw) the key is read as
    /// `get` reads it, and a delete removes the record's index entries too.
    private static func perform(_ operation: ApplyOperation, in transaction: WriteTransaction) throws {
        let form = try KeyForm.of(operation.collection, in: transaction)
        switch operation {
        case .put(let collection, let key, let value):
            try transaction.put(try form.bytes(StoredValue.key(key)), value, in: collection)
        case .delete(let collection, let key):
            let bytes = try form.bytes(StoredValue.key(key))
            let deleted =
                form.isDatastore
                ? try TypedCollection.deleteRecord(bytes, from: collection, in: transaction)
                : try transaction.delete(bytes, in: collection)
            guard deleted else {
                throw CommandFailure.notFound("no key \"\(StoredValue.key(key))\" in collection \"\(collection)\"")
            }
        }
    }
}
