/// What a central's and a peripheral's ``LinkProfile`` agree on, as the link layer negotiates
/// it: the connection interval the central grants, the smaller data length (LL_LENGTH_REQ /
/// RSP, Core Vol 6, Part B, 5.1.9), the fastest PHY both support (LL_PHY_REQ / RSP, 5.1.10),
/// the smaller packet-per-event limit, and the smaller ATT_MTU offer (the ATT MTU exchange,
/// Vol 3, Part F, 3.4.2).
///
/// The interval: when the peripheral asks for a range, the central answers by its
/// ``LinkProfile/intervalRequestRule``: the shortest whole multiple of its step that lies in
/// both that range and the intervals it grants (``IntervalRequestRule/firstFit``), or Interval
/// Min if it grants that (``IntervalRequestRule/intervalMinOrDefault``, as iPhones do); when
/// there is none (or the peripheral asks for nothing), it keeps its default.
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
    /// The longest payload a packet carries: ``dataLength``, or, on a PHY so slow that a packet
    /// of that length and the empty packet answering it outlast the connection interval (LE
    /// Coded at a short interval), the longest that fits in one interval, but not under 27
    /// bytes. A connection event ends at the next one's anchor (Core, Vol 6, Part B, 4.5.1), so a
    /// packet that cannot end before it is never sent: the link layer sends shorter ones.
    public let packetPayload: Int

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
        var payload = dataLength
        let interval = Self.wholeMicroseconds(connectionInterval)
        while payload > LinkProfile.dataLengths.lowerBound, Self.exchangeMicroseconds(full: payload, on: phy) > interval
        {
            payload -= 1
        }
        packetPayload = payload
    }

    /// One exchange of a connection event: a packet of `full` payload bytes, the inter-frame
    /// space, the packet of `back` bytes answering it (empty by default), and the inter-frame
    /// space again.
    private static func exchangeMicroseconds(full: Int, back: Int = 0, on phy: LinkPHY) -> Int {
        let space = LinkPHY.interFrameSpaceMicroseconds
        return phy.airMicroseconds(payload: full, encrypted: false) + space
            + phy.airMicroseconds(payload: back, encrypted: false) + space
    }

    private static func grantedInterval(central: LinkProfile, peripheral: LinkProfile) -> Duration {
        guard let asked = peripheral.preferredConnectionIntervals else { return central.defaultConnectionInterval }
        if central.intervalRequestRule == .intervalMinOrDefault {
            // Interval Min itself, or nothing: a request below the central's range or off its
            // step is refused, not moved onto them.
            let minimum = asked.lowerBound
            let step = max(central.connectionIntervalStep, .microseconds(1_250))
            let onStep = LinkProfile.isWholeMultiple(minimum, of: step)
            return central.connectionIntervals.contains(minimum) && onStep ? minimum : central.defaultConnectionInterval
        }
        let lowest = max(asked.lowerBound, central.connectionIntervals.lowerBound)
        let highest = min(asked.upperBound, central.connectionIntervals.upperBound)
        let step = max(central.connectionIntervalStep, .microseconds(1_250))
        let granted = step * Self.wholeCount((lowest / step).rounded(.up))
        return granted <= highest ? granted : central.defaultConnectionInterval
    }

    /// `count` as an `Int`, within 0...Int.max (a profile's bounds are checked when a bridge
    /// takes its timing: negotiating first must not trap on the ones it will refuse).
    private static func wholeCount(_ count: Double) -> Int {
        count >= Double(Int.max) ? .max : Int(max(count, 0))
    }

    /// `duration` in whole microseconds, within 0...Int.max.
    private static func wholeMicroseconds(_ duration: Duration) -> Int {
        wholeCount(duration / .microseconds(1))
    }

    /// `a × b`, or `Int.max` past it (a count of packets no interval holds).
    private static func product(_ a: Int, _ b: Int) -> Int {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : product
    }

    /// `mtu` within the ATT_MTUs a link can have (23...517): what the calculators below take.
    private static func linkMTU(_ mtu: Int) -> Int {
        min(max(mtu, MTUMode.validRange.lowerBound), MTUMode.validRange.upperBound)
    }

    /// The link-layer packets an L2CAP PDU of `bytes` bytes (an ATT PDU and its 4-byte L2CAP
    /// header) is cut into: at least one (a count below one is taken as one byte).
    public func packets(l2capBytes bytes: Int) -> Int {
        let bytes = max(bytes, 1)
        return bytes / packetPayload + (bytes % packetPayload == 0 ? 0 : 1)
    }

    /// One exchange of a connection event streaming one way: a full packet (the data length,
    /// or less when the ATT_MTU's PDUs are shorter), the inter-frame space, the empty packet
    /// the other side answers with, and the inter-frame space again. Here and below, an `mtu`
    /// outside 23...517 is taken as the nearest ATT_MTU a link can have.
    public func exchangeTime(mtu: Int) -> Duration {
        .microseconds(exchangeMicroseconds(mtu: mtu))
    }

    /// An exchange at ATT_MTU `mtu`: a full packet (the packet payload, or less when the
    /// ATT_MTU's PDUs are shorter) answered by an empty one, or by a full one (`bothWays`).
    private func exchangeMicroseconds(mtu: Int, bothWays: Bool = false) -> Int {
        let full = min(packetPayload, Self.linkMTU(mtu) + 4)
        return Self.exchangeMicroseconds(full: full, back: bothWays ? full : 0, on: phy)
    }

    /// The connection interval in whole microseconds.
    private var intervalMicroseconds: Int { Self.wholeMicroseconds(connectionInterval) }

    /// How many exchanges of `microseconds` fit in the interval, but no more than the packet
    /// limit; at least one.
    private func exchangesPerEvent(of microseconds: Int) -> Int {
        max(1, min(packetLimit ?? .max, intervalMicroseconds / max(1, microseconds)))
    }

    /// How many packets one side sends in one connection event at ATT_MTU `mtu` while the
    /// other sends none: as many exchanges as fit in the interval, but no more than the packet
    /// limit; at least one.
    public func packetsPerEvent(mtu: Int) -> Int {
        exchangesPerEvent(of: exchangeMicroseconds(mtu: mtu))
    }

    /// How many packets each side sends in one connection event at ATT_MTU `mtu` when both
    /// have full packets to send: as many exchanges of a full packet each way as fit in the
    /// interval, but no more than the packet limit; at least one.
    public func packetsPerEventBothWays(mtu: Int) -> Int {
        exchangesPerEvent(of: exchangeMicroseconds(mtu: mtu, bothWays: true))
    }

    /// How many packets the peripheral sends in a connection event in which the central sent
    /// `central` (at ATT_MTU `mtu`): its packets answer the central's in their exchanges while the
    /// interval has time for a full packet each way, then go on with exchanges of their own
    /// (answered with empty packets) while the interval has time for those; at least one answer
    /// when the central sent any; at most the packet limit.
    public func peripheralPackets(afterCentral central: Int, mtu: Int) -> Int {
        guard central > 0 else { return packetsPerEvent(mtu: mtu) }
        let interval = intervalMicroseconds
        let oneWay = exchangeMicroseconds(mtu: mtu)
        let bothWays = exchangeMicroseconds(mtu: mtu, bothWays: true)
        // The answers that fit in the central's exchanges (each turns an empty answer full).
        let answered = min(central, max(0, interval - Self.product(central, oneWay)) / max(1, bothWays - oneWay))
        // Exchanges of the peripheral's own after the central's.
        let own = answered < central ? 0 : max(0, interval - Self.product(central, bothWays)) / max(1, oneWay)
        return max(1, min(packetLimit ?? .max, answered + own))
    }
}
