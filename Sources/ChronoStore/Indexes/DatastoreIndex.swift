// Index declarations: unique (one-to-one), one-to-many, and many-to-many over a key path.

/// How an index maps values to records.
public enum IndexKind: String, Sendable, Equatable, Codable {
    /// Each value belongs to at most one record (a unique index). Persisting a second record
    /// with the same value throws ``ChronoStoreError/uniqueIndexViolation(datastore:index:existing:conflicting:)``.
    case oneToOne
    /// Each record has one value; many records may share it.
    case oneToMany
    /// Each record has a collection of values (tags); each value may belong to many records.
    case manyToMany
}

/// A typed index over a property of a format's instances.
///
/// Declare one as a static property of the format, list it in ``DatastoreFormat/indexes``, and
/// query it with ``Datastore/load(_:equalTo:order:)`` or ``Datastore/load(_:in:order:)``.
/// The index is updated in the same transaction as each record, so it never disagrees with the
/// records in any root. Entries are ordered by value, then by identifier.
///
/// Storage: one engine collection per index; a unique index maps the value to the identifier,
/// the others map value + identifier to the identifier. Each persist costs O(values changed ×
/// log n).
public struct DatastoreIndex<Format: DatastoreFormat, Value: OrderedKey>: Sendable {
    /// The index's name, unique within the format (1 to 50 bytes, no "/").
    public let name: String
    /// How values map to records.
    public let kind: IndexKind
    let values: @Sendable (Format.Instance) -> [Value]

    /// A unique index over one property.
    public static func oneToOne(_ name: String, _ keyPath: any KeyPath<Format.Instance, Value> & Sendable) -> Self {
        Self(name: name, kind: .oneToOne) { [$0[keyPath: keyPath]] }
    }

    /// A non-unique index over one property.
    public static func oneToMany(_ name: String, _ keyPath: any KeyPath<Format.Instance, Value> & Sendable) -> Self {
        Self(name: name, kind: .oneToMany) { [$0[keyPath: keyPath]] }
    }

    /// An index over each element of a collection property (duplicates count once).
    public static func manyToMany<Values: Sequence & SendableMetatype>(
        _ name: String, _ keyPath: any KeyPath<Format.Instance, Values> & Sendable
    ) -> Self where Values.Element == Value {
        Self(name: name, kind: .manyToMany) { Array($0[keyPath: keyPath]) }
    }

    /// An index over values computed from the instance (for derived or composite values).
    /// `kind` must not be ``IndexKind/oneToOne`` unless `values` returns exactly one value.
    public static func computed(
        _ name: String, kind: IndexKind, _ values: @escaping @Sendable (Format.Instance) -> [Value]
    ) -> Self {
        Self(name: name, kind: kind, values: values)
    }

    init(name: String, kind: IndexKind, values: @escaping @Sendable (Format.Instance) -> [Value]) {
        self.name = name
        self.kind = kind
        self.values = values
    }
}

/// A type-erased index, for listing in ``DatastoreFormat/indexes``.
public struct AnyDatastoreIndex<Format: DatastoreFormat>: Sendable {
    /// The index's name.
    public let name: String
    /// How values map to records.
    public let kind: IndexKind
    /// The encoded values of an instance, deduplicated.
    let encodedValues: @Sendable (Format.Instance) -> [[UInt8]]
    /// The engine collection of this index (kept: every index entry a write puts or deletes
    /// names it, and building the string took an allocation each time).
    let collectionName: String

    /// Erases `index`'s value type.
    public init<Value>(_ index: DatastoreIndex<Format, Value>) {
        name = index.name
        kind = index.kind
        collectionName = Format.indexCollectionName(index.name)
        let values = index.values
        // A closure, not `map(\.orderedKeyBytes)`: a key path over the generic `Value` is
        // instantiated by the runtime at every call (a typed one-record commit took 354 k
        // instructions with it, 336 k without; Docs/Performance.md, "Typed index values without
        // a key path per call").
        encodedValues = { IndexValues.distinct(values($0).map { $0.orderedKeyBytes }) }
    }

    /// The index key of one encoded value for a record with key `recordKey`.
    func entryKey(value: [UInt8], recordKey: [UInt8]) -> [UInt8] {
        kind == .oneToOne ? value : value + recordKey
    }
}
