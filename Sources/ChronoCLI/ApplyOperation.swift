// One line of `apply` input: a put or delete, or an array of them, read into operations.

/// One edit in an `apply` transaction.
enum ApplyOperation {
    case put(collection: String, key: [UInt8], value: [UInt8])
    case delete(collection: String, key: [UInt8])

    /// The collection the operation writes.
    var collection: String {
        switch self {
        case .put(let collection, _, _), .delete(let collection, _): collection
        }
    }

    /// The operations of one input line: `{"put":{"c":..,"k":..,"v":..}}`,
    /// `{"delete":{"c":..,"k":..}}`, or a non-empty array of those.
    /// - Throws: a message saying what is wrong with the line.
    static func parse(line: String) throws -> [ApplyOperation] {
        let node: JSONNode
        do { node = try JSONReader.parse(line) } catch let error as JSONSyntaxError { throw LineError("\(error)") }
        switch node {
        case .array(let elements):
            guard !elements.isEmpty else { throw LineError("an empty array is not a transaction") }
            return try elements.map(operation)
        case .object:
            return [try operation(node)]
        default:
            throw LineError("expected an object or an array of objects")
        }
    }

    private static func operation(_ node: JSONNode) throws -> ApplyOperation {
        guard let members = node.members, members.count == 1, let member = members.first else {
            throw LineError(#"expected {"put":{...}} or {"delete":{...}}"#)
        }
        let body = member.value
        switch member.key {
        case "put":
            let fields = try fields(of: body, in: "put", allowed: ["c", "k", "v"])
            guard let value = fields["v"] else { throw LineError(#""put" needs "v", the JSON value"#) }
            return .put(collection: try collection(fields, "put"), key: try key(fields, "put"), value: Array(value.compactText.utf8))
        case "delete":
            let fields = try fields(of: body, in: "delete", allowed: ["c", "k"])
            return .delete(collection: try collection(fields, "delete"), key: try key(fields, "delete"))
        default:
            throw LineError("unknown operation \"\(member.key)\": use \"put\" or \"delete\"")
        }
    }

    private static func fields(of body: JSONNode, in kind: String, allowed: Set<String>) throws -> [String: JSONNode] {
        guard let members = body.members else { throw LineError("\"\(kind)\" must be an object") }
        var fields: [String: JSONNode] = [:]
        for (name, value) in members {
            guard allowed.contains(name) else { throw LineError("unknown field \"\(name)\" in \"\(kind)\"") }
            guard fields.updateValue(value, forKey: name) == nil else { throw LineError("field \"\(name)\" repeats in \"\(kind)\"") }
        }
        return fields
    }

    private static func collection(_ fields: [String: JSONNode], _ kind: String) throws -> String {
        guard let name = fields["c"]?.stringValue, (1...255).contains(name.utf8.count) else {
            throw LineError("\"\(kind)\" needs \"c\", a collection name of 1 to 255 bytes")
        }
        return name
    }

    private static func key(_ fields: [String: JSONNode], _ kind: String) throws -> [UInt8] {
        guard let key = fields["k"]?.stringValue, !key.isEmpty else {
            throw LineError("\"\(kind)\" needs \"k\", a non-empty string key")
        }
        return Array(key.utf8)
    }
}

/// What is wrong with one `apply` input line.
struct LineError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
