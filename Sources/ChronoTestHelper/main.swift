// A helper process for multi-process tests: writes to or reads from a store as instructed.
import ChronoStoreEngine
import Foundation

// Usage:
//   chrono-test-helper write STORE PREFIX COUNT     commit COUNT single-put transactions, keys PREFIX-i
//   chrono-test-helper write-threads STORE PREFIX THREADS COUNT
//                                                   THREADS threads at once each commit COUNT durable single-put
//                                                   transactions, keys PREFIX-t-i; prints "acknowledged KEY"
//                                                   as each commit returns
//   chrono-test-helper count STORE COLLECTION       print the collection's entry count
//   chrono-test-helper create-open STORE MILLIS     at MILLIS (ms since 1970) open or create STORE, put one key
//   chrono-test-helper hold-write STORE             begin a write, put "held", print "ready", commit at end of input
//   chrono-test-helper pin STORE                    begin a read, print its root and "ready", wait for end of input
//   chrono-test-helper cycle STORE PREFIX COUNT     COUNT times: open, commit one key, check the path still names
//                                                   the file while open, close (prints "replaced" for each refusal)
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    FileHandle.standardError.write("usage: chrono-test-helper COMMAND STORE ...\n".data(using: .utf8)!)
    exit(2)
}

@Sendable func fail(_ message: String) -> Never {
    FileHandle.standardError.write("chrono-test-helper: \(message)\n".data(using: .utf8)!)
    exit(1)
}

@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
}

/// Waits until standard input ends (the test closes it).
func waitForEndOfInput() { _ = FileHandle.standardInput.readDataToEndOfFile() }

func cycle(_ path: String, prefix: String, count: Int) throws {
    for index in 0..<count {
        do {
            let store = try Store.open(at: path)
            try store.write { try $0.put(Array("\(prefix)-\(index)".utf8), Array("x".utf8), in: "shared") }
            // While this process has the store open, nobody may replace it: the path must still
            // name the file the commit went into.
            if store.fileIdentity != Store.fileIdentity(atPath: path) {
                say("violation: acknowledged a commit into a file the path no longer names")
            }
            say("committed \(prefix)-\(index)")
            try store.close()
        } catch StoreError.storeReplaced {
            say("replaced")
        }
    }
}

/// Commits from several threads at once, so their durable commits share syncs.
func writeFromThreads(_ path: String, prefix: String, threads: Int, count: Int) throws {
    let store = try Store.open(at: path)
    let output = NSLock()
    let done = DispatchGroup()
    for thread in 0..<threads {
        done.enter()
        Thread {
            commitFromThread(store, prefix: prefix, thread: thread, count: count, output: output)
            done.leave()
        }.start()
    }
    done.wait()
    try store.close()
}

/// One thread's commits for `write-threads`.
@Sendable func commitFromThread(_ store: Store, prefix: String, thread: Int, count: Int, output: NSLock) {
    for index in 0..<count {
        let key = "\(prefix)-\(thread)-\(index)"
        do {
            try store.write { transaction in
                let seen = try transaction.count(in: "shared")
                try transaction.put(Array(key.utf8), Array("\(seen)".utf8), in: "shared")
            }
        } catch {
            fail("\(key): \(error)")
        }
        output.lock()
        say("acknowledged \(key)")
        output.unlock()
    }
}

do {
    let path = arguments[1]
    switch arguments[0] {
    case "write":
        let store = try Store.open(at: path)
        let prefix = arguments[2]
        let count = Int(arguments[3]) ?? 0
        for index in 0..<count {
            try store.write { transaction in
                let seen = try transaction.count(in: "shared")
                try transaction.put(Array("\(prefix)-\(index)".utf8), Array("\(seen)".utf8), in: "shared")
            }
        }
        try store.close()
    case "write-threads":
        try writeFromThreads(path, prefix: arguments[2], threads: Int(arguments[3]) ?? 1, count: Int(arguments[4]) ?? 0)
    case "count":
        let store = try Store.open(at: path)
        try store.read { print(try $0.count(in: arguments[2])) }
        try store.close()
    case "create-open":
        let start = Double(arguments[2]) ?? 0
        while Date().timeIntervalSince1970 * 1000 < start { usleep(200) }
        let store = try Store.openOrCreate(at: path)
        try store.write { try $0.put(Array("opener-\(getpid())".utf8), Array("x".utf8), in: "shared") }
        try store.close()
    case "hold-write":
        let store = try Store.open(at: path)
        let transaction = try store.beginWrite()
        try transaction.put(Array("held".utf8), Array("x".utf8), in: "shared")
        say("ready")
        waitForEndOfInput()
        _ = try transaction.commit()
        try store.close()
    case "pin":
        let store = try Store.open(at: path)
        let reader = try store.beginRead()
        say("\(reader.root.transaction.rawValue)")
        say("ready")
        waitForEndOfInput()
        reader.close()
        try store.close()
    case "cycle":
        try cycle(path, prefix: arguments[2], count: Int(arguments[3]) ?? 0)
    default:
        exit(2)
    }
} catch {
    fail("\(error)")
}
