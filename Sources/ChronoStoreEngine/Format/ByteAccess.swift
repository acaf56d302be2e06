// Little-endian loads and stores at byte offsets, the only way the engine touches encoded bytes.

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func storeLittleEndian<Value: FixedWidthInteger>(_ value: Value, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<Value>.size <= count, "store past the end of a buffer")
        baseAddress!.storeBytes(of: value.littleEndian, toByteOffset: offset, as: Value.self)
    }

    @inline(__always)
    func loadLittleEndian<Value: FixedWidthInteger>(at offset: Int, as type: Value.Type = Value.self) -> Value {
        UnsafeRawBufferPointer(self).loadLittleEndian(at: offset, as: type)
    }

    func storeReference(_ reference: PageReference, at offset: Int) {
        storeLittleEndian(reference.page.rawValue, at: offset)
        storeLittleEndian(reference.birth.rawValue, at: offset + 8)
    }
}

extension UnsafeRawBufferPointer {
    /// Loads an integer; the caller has checked that `offset` lies within the buffer.
    @inline(__always)
    func loadLittleEndian<Value: FixedWidthInteger>(at offset: Int, as type: Value.Type = Value.self) -> Value {
        precondition(offset >= 0 && offset + MemoryLayout<Value>.size <= count, "load past the end of a buffer")
        return Value(littleEndian: baseAddress!.loadUnaligned(fromByteOffset: offset, as: Value.self))
    }

    func loadReference(at offset: Int) -> PageReference {
        PageReference(
            page: PageID(loadLittleEndian(at: offset, as: UInt64.self)),
            birth: TransactionID(loadLittleEndian(at: offset + 8, as: UInt64.self)))
    }
}

extension Array where Element == UInt8 {
    /// `byteCount` bytes, zeroed and then written by `fill`: the way to build a small key or
    /// record. `[UInt8](unsafeUninitializedCapacity:)` and `[UInt8](repeating:count:)` reach
    /// the standard library's unspecialized allocation, which looks up the array's storage type
    /// through the runtime on every call (about 400 instructions more for a 16-byte key, counted
    /// with callgrind; keys like these are built about 30 times a commit). Copying a buffer into
    /// a new array stays specialized.
    @inline(__always)
    init(byteCount: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        self = withZeroedBytes(byteCount) { raw in
            fill(raw)
            return [UInt8](UnsafeRawBufferPointer(raw))
        }
    }
}

/// Calls `body` with `byteCount` zeroed bytes on the stack (on the heap when large), which it
/// must not keep: for small records built or written once, without an array.
@inline(__always)
func withZeroedBytes<Result>(_ byteCount: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
    try withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 8) { raw in
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        return try body(raw)
    }
}
