/// A Bluetooth LE physical layer, and how long a link-layer packet takes on it.
///
/// Air time follows the packet formats of the Core specification, Vol 6, Part B, 2.1 (uncoded)
/// and 2.2 (coded): a preamble (1 byte on LE 1M, 2 bytes on LE 2M), the 4-byte access address,
/// the 2-byte PDU header, the payload (0…251 bytes), a 4-byte MIC on an encrypted link when
/// the payload is not empty, and the 3-byte CRC, at 1 µs per bit on LE 1M and 0.5 µs per bit
/// on LE 2M. On the coded PHY the 80 µs preamble is followed by FEC block 1 (access address,
/// 2-bit coding indicator and 3-bit TERM1: 37 bits, always at S=8, 296 µs) and FEC block 2
/// (PDU header, payload, MIC and CRC, then the 3-bit TERM2) at S=2 or S=8 µs per bit. The
/// results agree with the specification's own figures: 328 µs for a 27-byte encrypted packet
/// on LE 1M (connMaxTxTime's default, Vol 6, Part B, 4.5.10), 2,120 µs for a 251-byte one, and
/// 17,040 µs on the coded PHY at S=8.
public enum LinkPHY: String, Sendable, Hashable, CaseIterable {
    /// LE 1M: 1 Msym/s, uncoded.
    case le1M
    /// LE 2M: 2 Msym/s, uncoded (Bluetooth 5.0).
    case le2M
    /// LE Coded with S=2 (500 kb/s of data).
    case leCodedS2
    /// LE Coded with S=8 (125 kb/s of data).
    case leCodedS8

    /// The inter-frame space between two packets of a connection event, T_IFS (Vol 6, Part B,
    /// 4.1.1): 150 µs.
    public static let interFrameSpace = Duration.microseconds(interFrameSpaceMicroseconds)

    /// ``interFrameSpace`` in microseconds, as the air-time arithmetic counts.
    static let interFrameSpaceMicroseconds = 150

    /// How long a data-channel packet with `payload` bytes (0…251) takes on the air, with a MIC
    /// when `encrypted` and the payload is not empty. An empty packet takes 80 µs on LE 1M and
    /// 44 µs on LE 2M.
    public func airTime(payload: Int, encrypted: Bool = false) -> Duration {
        .microseconds(airMicroseconds(payload: payload, encrypted: encrypted))
    }

    /// ``airTime(payload:encrypted:)`` in whole microseconds.
    func airMicroseconds(payload: Int, encrypted: Bool) -> Int {
        let payload = min(max(payload, 0), 251)
        // PDU header, payload, MIC and CRC: the bytes every PHY carries after the access address.
        let pdu = 2 + payload + (encrypted && payload > 0 ? 4 : 0) + 3
        switch self {
        case .le1M: return (1 + 4 + pdu) * 8
        case .le2M: return (2 + 4 + pdu) * 8 / 2
        case .leCodedS2: return 80 + 296 + (pdu * 8 + 3) * 2
        case .leCodedS8: return 80 + 296 + (pdu * 8 + 3) * 8
        }
    }

    /// The PHY a link uses when its sides list `central` and `peripheral`: the fastest one both
    /// list (LE 2M, then LE 1M, then coded S=2, then S=8), or LE 1M, which every controller
    /// supports, when they list none in common.
    static func fastest(common central: Set<LinkPHY>, _ peripheral: Set<LinkPHY>) -> LinkPHY {
        let both = central.intersection(peripheral)
        return [.le2M, .le1M, .leCodedS2, .leCodedS8].first(where: both.contains) ?? .le1M
    }
}
