import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the timeline writes attributes, bytes, errors and states: briefly, since a label
/// shares its row with an arrow.
extension EntryDescriber {
    /// A UUID as a label shows it: by its name if it has one, a 16- or 32-bit one whole, a
    /// 128-bit one by its first eight digits (the tooltip has it all).
    func name(_ uuid: String) -> String {
        names[uuid] ?? (uuid.count > 8 ? uuid.prefix(8) + "…" : uuid)
    }

    /// Bytes in hex, at most sixteen of them, with the length when there is more than one.
    static func bytes(_ data: Data) -> String {
        if data.isEmpty { return "empty" }
        let shown = FixtureBytes.hexString(data.prefix(16)) + (data.count > 16 ? "…" : "")
        return data.count == 1 ? shown : "\(shown) (\(data.count) bytes)"
    }

    /// An error by name, domain and code, e.g. `writeNotPermitted (att 3)`.
    static func errorText(_ error: LoggedError) -> String {
        let trace = ScenarioTrace.TraceError(error.error)
        return "\(trace.name) (\(trace.domain) \(trace.code))"
    }

    /// A state change's detail as a note: `state poweredOff`, `reset`, `proximity outOfRange`.
    static func state(_ detail: String) -> String {
        if detail.hasPrefix("proximity=") { return "proximity " + detail.dropFirst("proximity=".count) }
        if detail.hasPrefix("name=") { return "name " + detail.dropFirst("name=".count) }
        let events = ["reset", "shut down", "app terminated", "restored", "background", "foreground"]
        return events.contains(detail) ? detail : "state " + detail
    }

    /// A log kind in words: `advertisingStarted` is `advertising started`.
    static func words(_ kind: BridgeLogEntry.Kind) -> String {
        var text = ""
        for character in kind.rawValue {
            if character.isUppercase {
                text += " " + character.lowercased()
            } else {
                text.append(character)
            }
        }
        return text.replacingOccurrences(of: "l2cap", with: "L2CAP").replacingOccurrences(of: "ancs", with: "ANCS")
    }
}
