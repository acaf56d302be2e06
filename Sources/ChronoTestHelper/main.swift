// A helper process for multi-process tests: writes to or reads from a store as instructed.
import ChronoStoreEngine
import Foundation

// Usage:
//   chrono-test-helper write STORE PREFIX COUNT   commit COUNT single-put transactions, keys PREFIX-i
//   chrono-test-helper count STORE COLLECTION     print the collection's entry count
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else {
    FileHandle.standardError.write("usage: chrono-test-helper write|count STORE ...\n".data(using: .utf8)!)
    exit(2)
}
do {
    let store = try Store.open(at: arguments[1])
    switch arguments[0] {
    case "write":
        let prefix = arguments[2]
        let count = Int(arguments[3]) ?? 0
        for index in 0..<count {
            try store.write { transaction in
                let seen = try transaction.count(in: "shared")
                try transaction.put(Array("\(prefix)-\(index)".utf8), Array("\(seen)".utf8), in: "shared")
            }
        }
    case "count":
        try store.read { print(try $0.count(in: arguments[2])) }
    default:
        exit(2)
    }
    try store.close()
} catch {
    FileHandle.standardError.write("chrono-test-helper: \(error)\n".data(using: .utf8)!)
    exit(1)
}
