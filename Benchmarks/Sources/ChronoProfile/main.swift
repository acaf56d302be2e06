// chrono-profile: one engine workload per process, for instruction counts (callgrind) and timings.
//
// Usage: chrono-profile MODE STORE RECORDS [COUNT] [CACHE_MIB]
//   load    STORE RECORDS              create STORE and put RECORDS records in one durable transaction
//   reads   STORE RECORDS COUNT [MIB]  COUNT point reads of random existing keys in one read transaction
//   scans   STORE RECORDS COUNT [MIB]  COUNT range scans of 10 entries from random existing keys
//   batch   STORE RECORDS COUNT        COUNT deferred transactions of 1,000 puts of new keys
//   single  STORE RECORDS COUNT        COUNT deferred transactions of one put of a new key
//   durable STORE RECORDS COUNT        COUNT durable transactions of one put of a new key
//   group   STORE RECORDS COUNT        8 threads, each COUNT durable transactions of one put (group commit)
//   deletes STORE RECORDS              delete every other record in one durable transaction
//   open    STORE RECORDS COUNT        open the store and read one record, COUNT times
//   history STORE RECORDS COUNT        COUNT transactions of 10 updates to random loaded records
//                                      (CHRONO_PROFILE_DEFERRED=1: deferred)
//   revert  STORE RECORDS STEPS        revert the head to the root STEPS commits back (the history
//                                      listing's entry STEPS), and say whether its head may now reach
//                                      packed versions (its readers then look in the pack first)
//   typed   STORE RECORDS COUNT        through the typed API: create STORE, persist RECORDS dated
//                                      events in one transaction, then COUNT durable transactions
//                                      of one new event each (chrono-bench's typed app row)
//   typed-group STORE RECORDS COUNT    as typed, but 8 tasks each run COUNT transactions at once
//   typed-reads STORE RECORDS COUNT    create STORE with RECORDS events, then COUNT loads of events by
//                                      identifier in one read transaction (the typed read path)
// Keys are 24 bytes from a fixed SplitMix64 sequence (the same RECORDS give the same keys in every
// mode, so `load` then `reads` finds them), values 150 bytes. Each mode prints microseconds per
// operation. CHRONO_PROFILE_DURABLE=1 makes `batch` and `single` commit durably, as chrono-bench's
// batch row does; CHRONO_PROFILE_MMAP=off reads with pread instead of the memory map;
// CHRONO_PROFILE_DIRTY_PAGES=N sets the dirty page limit (StoreOptions.dirtyPageLimit);
// CHRONO_PROFILE_CHECKPOINT_MIB=N the deferred-mode checkpoint limit (checkpointByteLimit, MiB);
// CHRONO_PROFILE_PACKING=off keeps history as whole pages (=inline packs inside the commits that
// make packing due, not in packing commits of their own); CHRONO_PROFILE_RETAIN=N the retention
// `load` creates the store with (last N roots, 0 = limitless; default 1); CHRONO_PROFILE_SECURE=1
// creates it with secure delete.
//
// For callgrind, strip the debug information first (valgrind 3.19 cannot read Swift 6.3's DWARF):
//   strip --strip-debug .build/release/chrono-profile
//   valgrind --tool=callgrind .build/release/chrono-profile reads s.store 100000 100000 6

import ChronoStore
import ChronoStoreEngine
import Foundation

struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Key number `index` of the sequence `stream` (0: loaded records; others: new keys).
func key(_ index: Int, stream: UInt64 = 0) -> [UInt8] {
    var generator = SplitMix64(state: UInt64(index) &* 7919 &+ stream &* 0x1_0000_0001)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    for _ in 0..<3 {
        let word = generator.next()
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }
    return bytes
}

func value(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 150) }

func seconds() -> Double { Date().timeIntervalSinceReferenceDate }

func report(_ mode: String, _ start: Double, _ operations: Int) {
    print("\(mode): \(String(format: "%.3f", (seconds() - start) / Double(max(operations, 1)) * 1e6)) µs per operation")
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let recordCount = Int(arguments[3]) else {
    let usage = "usage: chrono-profile load|reads|scans|batch|single|durable|group|deletes|history|typed|typed-group|typed-reads|open STORE RECORDS [COUNT] [CACHE_MIB]\n"
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
let (mode, path) = (arguments[1], arguments[2])
let count = arguments.count > 4 ? Int(arguments[4]) ?? 0 : 0
let cacheMiB = arguments.count > 5 ? Int(arguments[5]) ?? 64 : 64
let retained = ProcessInfo.processInfo.environment["CHRONO_PROFILE_RETAIN"].flatMap({ Int($0) }) ?? 1
var options = StoreOptions(
    durability: .durable, cacheByteCount: cacheMiB << 20, retention: retained == 0 ? .limitless : .lastRoots(retained))
if ProcessInfo.processInfo.environment["CHRONO_PROFILE_MMAP"] == "off" { options.memoryMappedReads = false }
if ProcessInfo.processInfo.environment["CHRONO_PROFILE_PACKING"] == "off" { options.packing = .disabled }
if ProcessInfo.processInfo.environment["CHRONO_PROFILE_PACKING"] == "inline" { options.packing.inBackground = false }
if let roots = ProcessInfo.processInfo.environment["CHRONO_PROFILE_BATCH"].flatMap({ Int($0) }) { options.packing.batchRoots = roots }
if ProcessInfo.processInfo.environment["CHRONO_PROFILE_SECURE"] == "1" { options.secureDelete = true }
if let limit = ProcessInfo.processInfo.environment["CHRONO_PROFILE_DIRTY_PAGES"].flatMap({ Int($0) }) { options.dirtyPageLimit = limit }
if let limit = ProcessInfo.processInfo.environment["CHRONO_PROFILE_CHECKPOINT_MIB"].flatMap({ Int($0) }) {
    options.checkpointByteLimit = limit << 20
}
let collection = "records"
/// `count` keys of loaded records, picked at random (the same ones in every run).
func randomRecords(_ count: Int, of recordCount: Int) -> [[UInt8]] {
    var picker = SplitMix64(state: 42)
    return (0..<count).map { _ in key(Int(picker.next() % UInt64(recordCount))) }
}

switch mode {
case "load":
    let store = try Store.create(at: path, options: options)
    let start = seconds()
    try store.write { transaction in
        for index in 0..<recordCount { try transaction.put(key(index), value(index), in: collection) }
    }
    report(mode, start, recordCount)
    try store.close()
case "open":
    // Opening the store and reading one record, COUNT times (the history benchmark's "open + first read").
    var total = 0.0
    for _ in 0..<count {
        let start = seconds()
        let store = try Store.open(at: path, options: options)
        _ = try store.read { try $0.value(forKey: key(0), in: collection) }
        total += seconds() - start
        try store.close()
    }
    print("open: \(String(format: "%.1f", total / Double(count) * 1e6)) µs per open and first read")
case "reads":
    let store = try Store.open(at: path, options: options)
    let keys = randomRecords(count, of: recordCount)
    let start = seconds()
    let found = try store.read { reader in
        try keys.reduce(0) { $0 + (try reader.value(forKey: $1, in: collection)?.count ?? 0) }
    }
    report(mode, start, count)
    precondition(found == count * 150, "a loaded record is missing")
    try store.close()
case "scans":
    let store = try Store.open(at: path, options: options)
    let keys = randomRecords(count, of: recordCount)
    let start = seconds()
    try store.read { reader in
        for first in keys {
            var seen = 0
            try reader.scan(collection, range: KeyRange(lower: KeyBound(first, inclusive: true)), reverse: false) { _, _ in
                seen += 1
                return seen < 10
            }
        }
    }
    report(mode, start, count)
    try store.close()
case "batch", "single", "durable":
    if mode != "durable" && ProcessInfo.processInfo.environment["CHRONO_PROFILE_DURABLE"] != "1" {
        options.durability = .deferred
    }
    let store = try Store.open(at: path, options: options)
    let perTransaction = mode == "batch" ? 1_000 : 1
    let start = seconds()
    for transaction in 0..<count {
        try store.write { writer in
            for offset in 0..<perTransaction {
                let index = transaction * perTransaction + offset
                try writer.put(key(index, stream: mode == "batch" ? 1 : mode == "single" ? 2 : 3), value(index), in: collection)
            }
        }
    }
    report(mode, start, count * perTransaction)
    try store.close()
case "group":
    let store = try Store.open(at: path, options: options)
    let threads = 8
    let done = DispatchGroup()
    let start = seconds()
    for thread in 0..<threads {
        done.enter()
        Thread {
            for index in 0..<count {
                do {
                    try store.write { writer in
                        try writer.put(key(thread * count + index, stream: 4), value(index), in: collection)
                    }
                } catch {
                    fatalError("commit failed: \(error)")
                }
            }
            done.leave()
        }.start()
    }
    done.wait()
    report(mode, start, threads * count)
    try store.close()
case "history":
    // The history workload of chrono-bench: 10 updates of loaded records a transaction.
    if ProcessInfo.processInfo.environment["CHRONO_PROFILE_DEFERRED"] == "1" { options.durability = .deferred }
    let store = try Store.open(at: path, options: options)
    var picker = SplitMix64(state: 7)
    let start = seconds()
    for transaction in 0..<count {
        try store.write { writer in
            for offset in 0..<10 {
                let index = Int(picker.next() % UInt64(recordCount))
                try writer.put(key(index), value(transaction * 10 + offset), in: collection)
            }
        }
    }
    report(mode, start, count)
    try store.close()
case "revert":
    let store = try Store.open(at: path, options: options)
    let items = try store.history()
    guard count < items.count else { fatalError("only \(items.count) roots retained") }
    try store.revert(to: items[count].id)
    let state = try store.snapshot.state
    print("revert: to root \(items[count].id.rawValue); pack cursor \(state.packs.cursor.rawValue); head may reach packed versions: \(state.headReadsOldVersionsFromPacks)")
    try store.close()
case "typed":
    try profileTypedEvents(path: path, recordCount: recordCount, count: count, cacheMiB: cacheMiB)
case "typed-group":
    try profileTypedGroup(path: path, recordCount: recordCount, count: count, tasks: 8, cacheMiB: cacheMiB)
case "typed-reads":
    try profileTypedReads(path: path, recordCount: recordCount, count: count, cacheMiB: cacheMiB)
case "deletes":
    let store = try Store.open(at: path, options: options)
    let start = seconds()
    try store.write { writer in
        for index in stride(from: 0, to: recordCount, by: 2) { _ = try writer.delete(key(index), in: collection) }
    }
    report(mode, start, recordCount / 2)
    try store.close()
default:
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(2)
}
