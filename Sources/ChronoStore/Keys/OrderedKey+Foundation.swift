// Order-preserving encodings of String, UUID, Date and Optional.
public import Foundation

extension String: OrderedKey {
    /// The UTF-8 bytes of the string's NFC form, with each 0x00 written as 0x00 0xFF, then the
    /// terminator 0x00 0x01.
    ///
    /// The order is Unicode canonical order: the scalars of the NFC form, compared one by one
    /// (UTF-8 byte order is scalar order). Canonically equal strings (a precomposed "é" and
    /// "e" + U+0301) encode identically, as they are `==` in Swift. Swift's `<` gives the same
    /// order, except that the standard library's `<` is inconsistent for strings not in NFC
    /// where one is a canonical prefix of the other (`"e\u{301}a" < "éaa"` and its converse are
    /// both false); store NFC text if you compare it in Swift too. The escape and terminator make the
    /// encoding self-delimiting and keep "a" before "a\0" before "ab". Cost: O(length); ASCII
    /// strings skip normalization.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        let isASCII = utf8.allSatisfy { $0 < 0x80 }
        let normalized = isASCII ? self : precomposedStringWithCanonicalMapping
        for byte in normalized.utf8 {
            encoder.append(byte)
            if byte == 0 { encoder.append(0xFF) }
        }
        encoder.append(0)
        encoder.append(1)
    }
}

extension UUID: OrderedKey {
    /// The 16 bytes in their textual order.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        let value = uuid
        encoder.append(contentsOf: [
            value.0, value.1, value.2, value.3, value.4, value.5, value.6, value.7,
            value.8, value.9, value.10, value.11, value.12, value.13, value.14, value.15,
        ])
    }
}

extension Date: OrderedKey {
    /// `timeIntervalSinceReferenceDate` encoded as a `Double`.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        timeIntervalSinceReferenceDate.appendOrderedKey(to: &encoder)
    }
}

extension Optional: OrderedKey where Wrapped: OrderedKey {
    /// 0x00 for nil, or 0x01 followed by the wrapped value: nil sorts before every value.
    public func appendOrderedKey(to encoder: inout OrderedKeyEncoder) {
        switch self {
        case .none: encoder.append(0)
        case .some(let wrapped):
            encoder.append(1)
            wrapped.appendOrderedKey(to: &encoder)
        }
    }
}
