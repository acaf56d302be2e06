// The collections a write transaction changed, by name, remembering where the last one used sits.

/// A write transaction's collection states, keyed by the name's UTF-8 bytes.
///
/// Hashing a name (SipHash over its bytes) twice per `put` was about a tenth of a bulk load's
/// instructions (issue 14). A run of edits in one collection now hashes its name once: the
/// position of the collection used last is remembered, and its state is read and written there.
/// A dictionary's positions stay valid while only its values change; any insertion or removal
/// of a key goes through the subscript's setter, which forgets the position.
struct CollectionEdits {
    typealias State = WriteTransaction.CollectionState
    private(set) var states: [[UInt8]: State] = [:]
    /// The collection used last: the name the caller gave, its bytes, and its position in `states`.
    private var lastUsed: (collection: String, name: [UInt8], position: Dictionary<[UInt8], State>.Index)?

    var isEmpty: Bool { states.isEmpty }
    var names: Dictionary<[UInt8], State>.Keys { states.keys }

    subscript(name: [UInt8]) -> State? {
        get { states[name] }
        set {
            states[name] = newValue
            lastUsed = nil
        }
    }

    /// The name bytes and state of `collection` when it is the one used last (no hashing).
    func remembered(_ collection: String) -> (name: [UInt8], state: State)? {
        guard let lastUsed, lastUsed.collection == collection else { return nil }
        return (lastUsed.name, states.values[lastUsed.position])
    }

    /// Stores `state` for `name` (the bytes of `collection`) and remembers where it sits.
    mutating func update(_ collection: String, name: [UInt8], to state: State) {
        if let lastUsed, lastUsed.collection == collection {
            states.values[lastUsed.position] = state
            return
        }
        self[name] = state
        if let position = states.index(forKey: name) { lastUsed = (collection, name, position) }
    }
}
