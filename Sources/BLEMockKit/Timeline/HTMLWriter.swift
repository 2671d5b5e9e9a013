/// Builds an HTML document as text, escaping everything that is not markup.
struct HTMLWriter {
    /// The document so far.
    private(set) var text = ""

    /// `text` safe anywhere in an element's content or a quoted attribute value: `&`, `<`,
    /// `>`, `"` and `'` become entities, and control characters (which XML, and so inline
    /// SVG, does not allow) become U+FFFD.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "\n", "\t": escaped.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0xFFFE
                    || scalar.value == 0xFFFF
                {
                    escaped += "\u{FFFD}"
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }

    /// Appends markup as it is: only for text this file and its callers wrote, never data.
    mutating func raw(_ markup: String) {
        text += markup
    }

    /// Appends `content`, escaped.
    mutating func content(_ content: String) {
        text += Self.escape(content)
    }

    /// ` name="value"` for each attribute, values escaped.
    static func attributes(_ attributes: KeyValuePairs<String, any CustomStringConvertible>) -> String {
        attributes.map { " \($0.key)=\"\(escape($0.value.description))\"" }.joined()
    }

    /// Opens an element.
    mutating func open(_ tag: String, _ attributes: KeyValuePairs<String, any CustomStringConvertible> = [:]) {
        text += "<\(tag)\(Self.attributes(attributes))>"
    }

    /// Closes an element.
    mutating func close(_ tag: String) {
        text += "</\(tag)>\n"
    }

    /// An element with escaped text content.
    mutating func element(
        _ tag: String, _ attributes: KeyValuePairs<String, any CustomStringConvertible> = [:], text content: String
    ) {
        text += "<\(tag)\(Self.attributes(attributes))>\(Self.escape(content))</\(tag)>\n"
    }

    /// An empty SVG element, e.g. `<line …/>`.
    mutating func shape(_ tag: String, _ attributes: KeyValuePairs<String, any CustomStringConvertible>) {
        text += "<\(tag)\(Self.attributes(attributes))/>\n"
    }

    /// A whole document: the doctype, a head with `title` and the page's style sheet, and a
    /// body that `body` writes.
    mutating func document(title: String, style: String, body: (inout HTMLWriter) -> Void) {
        raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        element("title", text: title)
        raw("<style>\n\(style)</style>\n</head>\n<body>\n")
        body(&self)
        raw("</body>\n</html>\n")
    }
}
