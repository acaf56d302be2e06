// A second process for the recipes' tests: an app extension writing to a shared event log.
import ChronoStore
import ChronoStoreRecipes
import Foundation

// Usage:
//   ChronoRecipeHelper log-events STORE COUNT    append COUNT events "extension-i" to the shared event log "quotes", then exit
let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String) -> Never {
    FileHandle.standardError.write("ChronoRecipeHelper: \(message)\n".data(using: .utf8)!)
    exit(1)
}

guard arguments.count == 3, arguments[0] == "log-events", let count = Int(arguments[2]) else {
    fail("usage: ChronoRecipeHelper log-events STORE COUNT")
}

let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        let store = try await ChronoStore.open(at: URL(fileURLWithPath: arguments[1]))
        let events = SharedEventLog<String>(store: store, name: "quotes")
        for index in 0..<count { try await events.record("extension-\(index)", source: "extension") }
        try await store.close()
    } catch {
        fail("\(error)")
    }
    finished.signal()
}
finished.wait()
