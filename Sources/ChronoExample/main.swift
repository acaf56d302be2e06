// A runnable tour of the storage engine: create a store, commit, read, reopen.
import ChronoStoreEngine
import Foundation

let directory = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "chrono-example-\(UUID().uuidString)"
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let path = directory + "/example.chrono"

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "(none)" }

print("Creating a store at \(path)")
let store = try Store.create(at: path)
let (_, first) = try store.write(label: "Add two notes") { transaction in
    try transaction.put(bytes("note-1"), bytes("{\"title\":\"Buy milk\"}"), in: "notes")
    try transaction.put(bytes("note-2"), bytes("{\"title\":\"Call Sam\"}"), in: "notes")
}
print("Committed root \(first!.rawValue) durably (one fdatasync): 2 notes")
let (_, second) = try store.write(label: "Finish a note") { transaction in
    try transaction.delete(bytes("note-1"), in: "notes")
}
print("Committed root \(second!.rawValue): deleted note-1")

let reader = try store.beginRead()
try store.write(label: "Rename") { try $0.put(bytes("note-2"), bytes("{\"title\":\"Call Sam today\"}"), in: "notes") }
print("A reader opened before the last commit still sees: \(text(try reader.value(forKey: bytes("note-2"), in: "notes")))")
reader.close()
try store.close()

let reopened = try Store.open(at: path)
try reopened.read { transaction in
    print("After reopening, \(try transaction.count(in: "notes")) note(s):")
    try transaction.scan("notes", range: .all, reverse: false) { key, value in
        print("  \(text(key)) = \(text(value))")
        return true
    }
    print("Head root \(transaction.root.transaction.rawValue), label \"\(transaction.root.label ?? "")\"")
}
try reopened.close()
