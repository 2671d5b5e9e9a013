/// How a mock manager chooses the ATT_MTU it prefers on each new link. A link's ATT_MTU is
/// the smaller of the central's and the peripheral's preference, clamped to 23…517
/// (Bluetooth Core Specification, Vol 3, Part F, 3.2.8 and 3.4.2).
public enum MTUMode: Sendable, Hashable {
    /// Always prefer this ATT_MTU (23…517).
    case fixed(Int)
    /// Draw the preference for each link, with the bridge's seeded generator, from the values
    /// real devices negotiate (``realWorldValues``) that lie in the range.
    case realistic(ClosedRange<Int>)
    /// What the device prefers: with a link profile on its side of the link
    /// (``LinkTiming/centralProfile``, ``LinkTiming/peripheralProfile``), the profile's
    /// ``LinkProfile/attMTU`` (the profile describes the device); without one, what a typical
    /// device prefers: 185 for a central (an iPhone's common value) and 247 for a peripheral (a
    /// Bluetooth 4.2+ peripheral with data length extension).
    case device

    /// ATT_MTU values seen on real links: the minimum 23; 158 and 185 (iOS); 247 (an ATT PDU
    /// that fills one 251-byte link-layer packet with data length extension); 27 and 251
    /// (stacks that offer their link-layer data length, without and with data length
    /// extension, as their ATT_MTU, so a PDU takes two packets); 512 and 517 (maximum).
    public static let realWorldValues = [23, 27, 158, 185, 247, 251, 512, 517]

    /// The smallest and largest ATT_MTU a link can have.
    public static let validRange = 23...517

    /// Checks the mode's values; returns a description of the problem, if any.
    func problem() -> String? {
        switch self {
        case .fixed(let value) where !Self.validRange.contains(value):
            return "ATT_MTU \(value) is outside 23…517; use a value in that range"
        case .realistic(let range) where range.upperBound < 23 || range.lowerBound > 517:
            return "the ATT_MTU range \(range) has no value in 23…517"
        default:
            return nil
        }
    }

    /// The preference of a mode that draws nothing (every mode but ``realistic(_:)``).
    func fixedPreference(isCentral: Bool, profile: LinkProfile? = nil) -> Int? {
        switch self {
        case .fixed(let value): value
        case .device: profile?.attMTU ?? (isCentral ? 185 : 247)
        case .realistic: nil
        }
    }

    /// Draws a preference for a new link.
    func draw(isCentral: Bool, using random: inout SeededGenerator) -> Int {
        guard case .realistic(let range) = self else { return fixedPreference(isCentral: isCentral)! }
        let candidates = Self.realWorldValues.filter(range.contains)
        if let choice = random.element(from: candidates) { return choice }
        return min(max(range.lowerBound, 23), 517)
    }
}
