// Opening the store a command names, and closing it whatever happens.
import ChronoStoreEngine

extension Invocation {
    /// Opens the store at ``storePath``, runs `body`, and closes the store (making every
    /// commit durable) even when `body` throws.
    ///
    /// Commands check their arguments before calling this, so a command with bad input never
    /// opens the store. Opening waits while another process is committing.
    func withStore<Result>(_ body: (Store) throws -> Result) throws -> Result {
        let store = try Store.open(at: storePath)
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
        try withStore { store in
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
