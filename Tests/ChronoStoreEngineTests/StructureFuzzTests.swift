// The structure-aware fuzzer: mutate valid stores, then every operation returns the truth or a typed error.
@testable import ChronoStoreEngine
import ChronoStoreTestSupport
import Foundation
import Testing

/// One change to a store file.
enum FuzzMutation: CustomStringConvertible {
    /// A flipped bit; the checksum is left alone, so reads must catch it.
    case bitFlip(byteOffset: Int, bit: Int)
    /// A field of a page set to `value`, and the page's checksum recomputed: the file looks valid.
    case craftedField(page: Int, offset: Int, width: Int, value: UInt64)

    var description: String {
        switch self {
        case .bitFlip(let offset, let bit): "flip bit \(bit) of byte \(offset)"
        case .craftedField(let page, let offset, let width, let value): "page \(page): \(width)-byte field at \(offset) = \(value)"
        }
    }

    var recomputesChecksum: Bool {
        if case .craftedField = self { return true }
        return false
    }
}

/// Aborts the process, naming the operation, when one runs longer than the limit: a hang is a
/// failure that a test run must report rather than wait on forever.
final class FuzzWatchdog: @unchecked Sendable {  // `lock` guards `current`
    private let lock = NSLock()
    private var current: (name: String, started: Date)?
    private let timer: any DispatchSourceTimer
    let limitSeconds: Double

    init(limitSeconds: Double) {
        self.limitSeconds = limitSeconds
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "fuzz-watchdog"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
    }

    deinit { timer.cancel() }

    func run<Result>(_ name: String, _ body: () throws -> Result) rethrows -> Result {
        lock.withLock { current = (name, Date()) }
        defer { lock.withLock { current = nil } }
        return try body()
    }

    private func check() {
        guard let (name, started) = lock.withLock({ current }), Date().timeIntervalSince(started) > limitSeconds else { return }
        FileHandle.standardError.write(Data("fuzz: \(name) ran over \(limitSeconds) s: a hang\n".utf8))
        abort()
    }
}

/// Applies mutations to seed stores and runs every kind of operation on the result.
struct StructureFuzzer {
    var generator: SeededGenerator
    let seed: UInt64
    let directory: TemporaryDirectory
    let watchdog = FuzzWatchdog(limitSeconds: 30)
    var outcomes: [String: Int] = [:]

    init(seed: UInt64) throws {
        self.seed = seed
        generator = SeededGenerator(seed: seed)
        directory = try TemporaryDirectory(prefix: "chrono-fuzz")
    }

    mutating func mutate(_ bytes: inout [UInt8], pageSize: Int) -> FuzzMutation {
        let pageCount = bytes.count / pageSize
        if Bool.random(using: &generator) {
            let mutation = FuzzMutation.bitFlip(byteOffset: Int.random(in: 0..<bytes.count, using: &generator), bit: Int.random(in: 0..<8, using: &generator))
            if case .bitFlip(let offset, let bit) = mutation { bytes[offset] ^= 1 << bit }
            return mutation
        }
        let page = Int.random(in: 1..<pageCount, using: &generator)
        let start = page * pageSize
        let fields = FuzzFields.fields(of: Array(bytes[start..<(start + pageSize)]), pageSize: pageSize)
        let field = fields.randomElement(using: &generator)!
        let value = interestingValue(for: field, in: bytes, at: start, pageSize: pageSize, pageCount: pageCount)
        for index in 0..<field.width { bytes[start + field.offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
        bytes.withUnsafeMutableBytes { raw in
            PageCrafting.reseal(UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + pageSize)]))
        }
        return .craftedField(page: page, offset: field.offset, width: field.width, value: value)
    }

    /// Values that steer readers wrong: edges, neighbours of the old value, other pages' ids
    /// and births (cycles, shared children), this page's own id.
    private mutating func interestingValue(
        for field: FuzzFields.Field, in bytes: [UInt8], at start: Int, pageSize: Int, pageCount: Int
    ) -> UInt64 {
        var old: UInt64 = 0
        for index in 0..<field.width { old |= UInt64(bytes[start + field.offset + index]) << (8 * UInt64(index)) }
        let otherPage = Int.random(in: 1..<pageCount, using: &generator)
        let otherBirth = bytes.withUnsafeBytes { $0.loadLittleEndian(at: otherPage * pageSize + PageHeader.birthOffset, as: UInt64.self) }
        let widthMask: UInt64 = field.width == 8 ? .max : (1 << (8 * UInt64(field.width))) - 1
        let choices: [UInt64] = [
            0, 1, 2, old &+ 1, old &- 1, .max, 1 << 60, 1 << 31, 1 << 15, UInt64(pageCount), UInt64(start / pageSize),
            UInt64(otherPage), otherBirth, UInt64(pageSize), UInt64.random(in: 0...widthMask, using: &generator),
        ]
        return choices.randomElement(using: &generator)! & widthMask
    }
}

extension StructureFuzzer {
    /// Runs every operation on the store file at `path`; records an issue for anything but the
    /// truth or a ``StoreError``. With `checksValues`, values read must be those of the root read.
    /// With `editsHistory`, undo, redo, pruning and compaction run too (they cost more).
    mutating func exercise(_ path: String, seedStore: FuzzSeedStore, checksValues: Bool, editsHistory: Bool, context: String) {
        let options = StoreOptions(durability: .deferred, cacheByteCount: 1 << 20)
        guard let store = attempt("open", context, { try Store.open(at: path, options: options) }) else { return }
        defer { _ = attempt("close", context) { try store.close() } }
        let head = (try? store.snapshot.state.head.birth) ?? .none
        readAll(store, at: .head, expected: checksValues ? seedStore.contents[head] : nil, seedStore: seedStore, context: context)
        if let root = seedStore.contents.keys.sorted().randomElement(using: &generator) {
            readAll(store, at: .root(root), expected: checksValues ? seedStore.contents[root] : nil, seedStore: seedStore, context: context)
        }
        readAll(store, at: .snapshot(seedStore.snapshotName), expected: nil, seedStore: seedStore, context: context)
        _ = attempt("history", context) { try store.history(allBranches: true) }
        _ = attempt("snapshots", context) { try store.snapshots() }
        _ = attempt("verify", context) { try store.verify() }
        if editsHistory {
            _ = attempt("undo", context) { try store.undo() }
            _ = attempt("redo", context) { try store.redo() }
            _ = attempt("prune", context) { try store.setRetention(.lastRoots(2)); return try store.prune() }
            _ = attempt("compact", context) { try store.compact() }
        }
        _ = attempt("write", context) {
            try store.write { transaction in
                try transaction.put(Array("fuzz".utf8), [1], in: "alpha")
                try transaction.put(Array("large".utf8), [UInt8](repeating: 5, count: 3 * seedStore.pageSize), in: "blobs")
            }
        }
    }

    private mutating func readAll(
        _ store: Store, at selector: RootSelector, expected: FuzzContents?, seedStore: FuzzSeedStore, context: String
    ) {
        guard let reader = attempt("begin read at \(selector)", context, { try store.beginRead(at: selector) }) else { return }
        defer { reader.close() }
        for (collection, keys) in seedStore.keys.sorted(by: { $0.key < $1.key }) {
            // A sample of keys (present and absent ones) keeps each mutation fast; the scan sees all.
            for key in keys.sorted(by: { KeyOrder.compare($0, $1) < 0 }).shuffled(using: &generator).prefix(12) {
                let found = attempt("get \(collection)", context) { try reader.value(forKey: key, in: collection) }
                if let expected, let found, found != expected[collection]?[key] {
                    Issue.record("wrong value for \(collection)/\(String(decoding: key, as: UTF8.self)) at \(selector) after \(context)")
                }
            }
            var entries: [[UInt8]: [UInt8]] = [:]
            let reverse = Bool.random(using: &generator)
            let listed: Void? = attempt("list \(collection)", context) {
                try reader.scan(collection, range: .all, reverse: reverse) { key, value in
                    entries[key] = value
                    return true
                }
            }
            if let expected, listed != nil, entries != (expected[collection] ?? [:]) {
                Issue.record("wrong entries listed for \(collection) at \(selector) after \(context)")
            }
        }
    }

    /// Runs one operation under the watchdog: a ``StoreError`` is an acceptable answer, any
    /// other error is an issue. Returns nil when it threw.
    private mutating func attempt<Result>(_ name: String, _ context: String, _ body: () throws -> Result) -> Result? {
        do {
            let result = try watchdog.run("\(name) after \(context)", body)
            outcomes["ok", default: 0] += 1
            return result
        } catch let error as StoreError {
            outcomes[error.isDamage ? "damage" : "other typed error", default: 0] += 1
            return nil
        } catch {
            Issue.record("\(name) threw an untyped error after \(context): \(error)")
            return nil
        }
    }
}

@Suite("Structure-aware fuzzing")
struct StructureFuzzTests {
    @Test func mutatedStoresReturnTheTruthOrATypedErrorAndNeverHangOrTrap() throws {
        let seed = SeededGenerator.seed(fromEnvironment: "CHRONO_SEED")
        let mutationCount = Environment.soakEnabled ? 100_000 : Int(Environment.value("CHRONO_FUZZ_MUTATIONS") ?? "") ?? 300
        try Self.fuzz(seed: seed, mutationCount: mutationCount)
    }

    /// Seeds that once found a trap, replayed every run with as many mutations as found it.
    /// 14678162830194281417: a mutated history index named root id 2⁶⁴ − 1, and pruning's walk to
    /// the next id overflowed. 8652822463061937338: a mutated state's packing depth near 2⁶⁴
    /// overflowed packing's window arithmetic. 14990299429877893344: a mutated history entry named
    /// an earlier root than its key, and pruning's walk went back to it for ever (a hang).
    @Test(arguments: [
        (UInt64(14_678_162_830_194_281_417), 300), (UInt64(8_652_822_463_061_937_338), 5_000),
        (UInt64(14_990_299_429_877_893_344), 5_000),
    ])
    func seedsThatOnceTrappedReturnTheTruthOrATypedError(seed: UInt64, mutationCount: Int) throws {
        try Self.fuzz(seed: seed, mutationCount: mutationCount)
    }

    private static func fuzz(seed: UInt64, mutationCount: Int) throws {
        print("structure fuzz: seed \(seed), \(mutationCount) mutations (replay with CHRONO_SEED=\(seed))")
        var fuzzer = try StructureFuzzer(seed: seed)
        let seeds = try [
            FuzzSeedStore.build(pageSize: 4096, closeCleanly: true, in: fuzzer.directory),
            FuzzSeedStore.build(pageSize: 8192, closeCleanly: false, in: fuzzer.directory),
            FuzzSeedStore.build(pageSize: 16384, closeCleanly: true, in: fuzzer.directory),
        ]
        let path = fuzzer.directory.file("mutated.chrono")
        let started = Date()
        for number in 0..<mutationCount {
            let seedStore = seeds[number % seeds.count]
            var bytes = seedStore.bytes
            let mutations = (0..<Int.random(in: 1...3, using: &fuzzer.generator)).map { _ in
                fuzzer.mutate(&bytes, pageSize: seedStore.pageSize)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try? FileManager.default.removeItem(atPath: path + ".lock")
            let context = "mutation \(number) (seed \(seed)) of the store with \(seedStore.name): \(mutations)"
            let checksValues = !mutations.contains { $0.recomputesChecksum }
            fuzzer.exercise(path, seedStore: seedStore, checksValues: checksValues, editsHistory: number % 4 == 0, context: context)
        }
        print("structure fuzz: \(mutationCount) mutations in \(Int(Date().timeIntervalSince(started))) s; outcomes \(fuzzer.outcomes.sorted { $0.key < $1.key })")
    }
}
