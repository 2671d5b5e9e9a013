/// What a central's and a peripheral's ``LinkProfile`` agree on, as the link layer negotiates
/// it: the connection interval the central grants, the smaller data length (LL_LENGTH_REQ /
/// RSP, Core Vol 6, Part B, 5.1.9), the fastest PHY both support (LL_PHY_REQ / RSP, 5.1.10),
/// the smaller packet-per-event limit, and the smaller ATT_MTU offer (the ATT MTU exchange,
/// Vol 3, Part F, 3.4.2).
///
/// The interval: when the peripheral asks for a range, the central grants the shortest whole
/// multiple of its step that lies in both that range and the intervals it grants; when there
/// is none (or the peripheral asks for nothing), it keeps its default.
public struct NegotiatedLink: Sendable, Hashable {
    /// The connection interval.
    public let connectionInterval: Duration
    /// The largest link-layer payload either side sends (27…251).
    public let dataLength: Int
    /// The PHY both sides use.
    public let phy: LinkPHY
    /// The smaller of the two packet-per-event limits, or `nil` when neither side has one.
    public let packetLimit: Int?
    /// The smaller of the two ATT_MTU offers: the link's ATT_MTU is never more.
    public let attMTU: Int

    /// Negotiates `central`'s and `peripheral`'s profiles.
    public init(central: LinkProfile, peripheral: LinkProfile) {
        connectionInterval = Self.grantedInterval(central: central, peripheral: peripheral)
        dataLength = min(
            max(min(central.maximumDataLength, peripheral.maximumDataLength), LinkProfile.dataLengths.lowerBound),
            LinkProfile.dataLengths.upperBound)
        phy = LinkPHY.fastest(common: central.phys, peripheral.phys)
        packetLimit =
            switch (central.packetsPerConnectionEvent, peripheral.packetsPerConnectionEvent) {
            case (let c?, let p?): max(1, min(c, p))
            case (let c?, nil): max(1, c)
            case (nil, let p?): max(1, p)
            case (nil, nil): nil
            }
        attMTU = min(central.attMTU, peripheral.attMTU)
    }

    private static func grantedInterval(central: LinkProfile, peripheral: LinkProfile) -> Duration {
        guard let asked = peripheral.preferredConnectionIntervals else { return central.defaultConnectionInterval }
        let lowest = max(asked.lowerBound, central.connectionIntervals.lowerBound)
        let highest = min(asked.upperBound, central.connectionIntervals.upperBound)
        let step = max(central.connectionIntervalStep, .microseconds(1_250))
        let granted = step * Int((lowest / step).rounded(.up))
        return granted <= highest ? granted : central.defaultConnectionInterval
    }

    /// The link-layer packets an L2CAP PDU of `bytes` bytes (an ATT PDU and its 4-byte L2CAP
    /// header) is cut into: at least one.
    public func packets(l2capBytes bytes: Int) -> Int {
        max(1, (bytes + dataLength - 1) / dataLength)
    }

    /// One exchange of a connection event streaming one way: a full packet (the data length,
    /// or less when the ATT_MTU's PDUs are shorter), the inter-frame space, the empty packet
    /// the other side answers with, and the inter-frame space again.
    public func exchangeTime(mtu: Int) -> Duration {
        .microseconds(exchangeMicroseconds(mtu: mtu))
    }

    private func exchangeMicroseconds(mtu: Int) -> Int {
        let full = min(dataLength, mtu + 4)
        let space = LinkPHY.interFrameSpaceMicroseconds
        return phy.airMicroseconds(payload: full, encrypted: false) + space
            + phy.airMicroseconds(payload: 0, encrypted: false) + space
    }

    /// How many packets each side sends in one connection event at ATT_MTU `mtu`: as many
    /// exchanges as fit in the interval, but no more than the packet limit; at least one.
    public func packetsPerEvent(mtu: Int) -> Int {
        let fitting = Int(connectionInterval / .microseconds(1)) / max(1, exchangeMicroseconds(mtu: mtu))
        return max(1, min(packetLimit ?? .max, fitting))
    }
}
