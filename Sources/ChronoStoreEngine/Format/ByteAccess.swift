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
