import BLEMockKit

/// The importer's documents are the kit's JSON values (``TraceValue``: members keep the order
/// they were added in), printed here so people can read and diff them: small objects and
/// arrays on one line, larger ones one member per line, indented by two spaces.
typealias JSONValue = TraceValue

extension TraceValue {
    /// One member of an object.
    typealias Member = (key: String, value: TraceValue)

    /// How wide a line may grow before a value is spread over several lines.
    static let lineWidth = 110

    /// An object from key–value pairs, in order.
    static func object(_ pairs: KeyValuePairs<String, TraceValue>) -> TraceValue {
        .object(pairs.map { (key: $0.key, value: $0.value) })
    }

    /// A byte value as the fixture format writes it: `{"hex": "…"}`.
    static func bytes(_ bytes: some Sequence<UInt8>) -> TraceValue {
        .object(["hex": .string(FixtureBytes.hexString(bytes))])
    }

    /// The document as text, ending with a newline.
    var text: String {
        var output = ""
        write(to: &output, indent: 0, column: 0)
        return output + "\n"
    }

    /// The value on one line, with a space after each `:` and `,`.
    var compact: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .string(let value): Self.quoted(value)
        case .array(let elements): "[" + elements.map(\.compact).joined(separator: ", ") + "]"
        case .object(let members):
            "{" + members.map { Self.quoted($0.key) + ": " + $0.value.compact }.joined(separator: ", ") + "}"
        }
    }

    /// Writes the value starting at `column` of a line whose members are indented by `indent`.
    private func write(to output: inout String, indent: Int, column: Int) {
        let inline = compact
        if column + inline.count <= Self.lineWidth {
            output += inline
            return
        }
        let padding = String(repeating: " ", count: indent + 2)
        switch self {
        case .array(let elements):
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += padding
                element.write(to: &output, indent: indent + 2, column: indent + 2)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            output += "{\n"
            for (index, member) in members.enumerated() {
                let key = Self.quoted(member.key) + ": "
                output += padding + key
                member.value.write(to: &output, indent: indent + 2, column: indent + 2 + key.count)
                output += index == members.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        default:
            output += inline
        }
    }

    /// A JSON string literal, escaped per RFC 8259.
    static func quoted(_ value: String) -> String {
        TraceValue.string(value).json
    }
}
