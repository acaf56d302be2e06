// Opening the store a command names, and closing it whatever happens.
import ChronoStoreEngine

extension Invocation {
    /// Opens the store at ``storePath``, runs `body`, and closes the store (making every
    /// commit durable) even when `body` throws.
    ///
    /// Commands check their arguments before calling this, so a command with bad input never
    /// opens the store. Opening never waits for another process's writer; writing does.
    /// With `readOnly` (get, list, history, info, verify, backup) the store is opened for
    /// reading only: nothing is created or written, so these work on read-only media too.
    func withStore<Result>(readOnly: Bool = false, _ body: (Store) throws -> Result) throws -> Result {
        let store = try Store.open(at: storePath, readOnly: readOnly)
        let result: Result
        do {
            result = try body(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
    }

    /// Opens the store and runs `body` in a read transaction on `selector`'s root.
    func withReader<Result>(at selector: RootSelector = .head, _ body: (ReadTransaction) throws -> Result) throws -> Result {
        try withStore(readOnly: true) { store in
            let reader = try store.beginRead(at: selector)
            defer { reader.close() }
            return try body(reader)
        }
    }

    /// Prints the new head after a writing command: `{"root": ID}` with `--json`, else `message`.
    func reportHead(_ root: TransactionID, _ message: String) {
        if prefersJSON {
            console.print(.object([("root", .id(root))]))
        } else {
            console.print(message)
        }
    }
}
