import BLECore
import BLEMockKit
import Foundation
import Testing

/// The link-layer arithmetic of link profiles, checked against hand-computed values, and the
/// negotiation between a central's and a peripheral's limits.
@Suite("Link profiles: air time, negotiation and configuration", .timeLimit(.minutes(10)))
struct LinkProfileTests {
    // MARK: Air time

    static let airTimes: [(LinkPHY, Int, Bool, Duration)] = [
        // LE 1M: (preamble 1 + access address 4 + header 2 + payload + CRC 3) bytes at 8 µs.
        (.le1M, 0, false, .microseconds(80)),
        (.le1M, 27, false, .microseconds(296)),
        (.le1M, 251, false, .microseconds(2_088)),
        // With the 4-byte MIC: the specification's 328 µs and 2,120 µs.
        (.le1M, 27, true, .microseconds(328)),
        (.le1M, 251, true, .microseconds(2_120)),
        // An empty packet carries no MIC, encrypted or not.
        (.le1M, 0, true, .microseconds(80)),
        // LE 2M: (preamble 2 + 4 + 2 + payload + 3) bytes at 4 µs.
        (.le2M, 0, false, .microseconds(44)),
        (.le2M, 27, false, .microseconds(152)),
        (.le2M, 251, false, .microseconds(1_048)),
        (.le2M, 251, true, .microseconds(1_064)),
        // Coded: 80 µs preamble, 296 µs FEC block 1, then (header, payload, MIC, CRC, TERM2) at S µs a bit.
        (.leCodedS8, 0, false, .microseconds(720)),
        (.leCodedS8, 251, true, .microseconds(17_040)),
        (.leCodedS2, 0, false, .microseconds(462)),
        (.leCodedS2, 27, false, .microseconds(894)),
        (.leCodedS2, 251, true, .microseconds(4_542)),
        (.leCodedS8, 27, false, .microseconds(2_448)),
    ]

    @Test("A packet's air time is its bytes at the PHY's bit time, as computed by hand", arguments: airTimes)
    func airTime(phy: LinkPHY, payload: Int, encrypted: Bool, expected: Duration) {
        #expect(phy.airTime(payload: payload, encrypted: encrypted) == expected)
    }

    @Test("A payload outside 0…251 bytes is timed as the nearest allowed one")
    func airTimeClampsThePayload() {
        #expect(LinkPHY.le1M.airTime(payload: -5) == .microseconds(80))
        #expect(LinkPHY.le1M.airTime(payload: 400) == .microseconds(2_088))
    }

    @Test("An exchange streaming one way is a full packet, an empty one and two inter-frame spaces")
    func exchangeTime() {
        let fast = NegotiatedLink(central: .nRF52840, peripheral: .nRF52840)
        // 1,048 + 150 + 44 + 150 µs on LE 2M with 251-byte packets.
        #expect(fast.exchangeTime(mtu: 247) == .microseconds(1_392))
        // At ATT_MTU 23 the longest packet is 27 bytes: 152 + 150 + 44 + 150.
        #expect(fast.exchangeTime(mtu: 23) == .microseconds(496))
        let slow = NegotiatedLink(central: .iPhoneiOS10, peripheral: .watch)
        // 296 + 150 + 80 + 150 µs on LE 1M with 27-byte packets.
        #expect(slow.exchangeTime(mtu: 185) == .microseconds(676))
    }

    @Test("An L2CAP PDU is cut into packets of at most the data length")
    func fragmentation() {
        let short = NegotiatedLink(central: .iPhoneiOS10, peripheral: .watch)
        #expect(short.packets(l2capBytes: 27) == 1)
        #expect(short.packets(l2capBytes: 28) == 2)
        // A 182-byte notification: 182 + 3 + 4 = 189 bytes, seven packets of 27.
        #expect(short.packets(l2capBytes: 189) == 7)
        #expect(short.packets(l2capBytes: 0) == 1)
        let long = NegotiatedLink(central: .iPhoneiOS18, peripheral: .watch)
        #expect(long.packets(l2capBytes: 251) == 1)
        #expect(long.packets(l2capBytes: 252) == 2)
    }

    /// (The largest counts trapped on an overflow; a negative ATT_MTU gave more packets an
    /// event than the smallest real one.)
    @Test("The calculators take counts no link has as the nearest it can have, and never trap")
    func calculatorsTakeImpossibleCountsAsTheNearest() {
        let link = NegotiatedLink(central: .iPhoneiOS18, peripheral: .watch)
        #expect(link.packets(l2capBytes: .max) == Int.max / 251 + 1)
        #expect(link.packets(l2capBytes: -100) == 1)
        #expect(link.packetsPerEvent(mtu: .max) == link.packetsPerEvent(mtu: 517))
        #expect(link.packetsPerEvent(mtu: -50) == link.packetsPerEvent(mtu: 23))
        #expect(link.packetsPerEvent(mtu: 0) == link.packetsPerEvent(mtu: 23))
        #expect(link.exchangeTime(mtu: .min) == link.exchangeTime(mtu: 23))
        #expect(link.packetsPerEventBothWays(mtu: .max) == link.packetsPerEventBothWays(mtu: 517))
        #expect(link.peripheralPackets(afterCentral: .max, mtu: 247) == 1)
        #expect(link.peripheralPackets(afterCentral: .max, mtu: .max) == 1)
        #expect(link.peripheralPackets(afterCentral: -3, mtu: 247) == link.packetsPerEvent(mtu: 247))
    }

    @Test("An event carries as many exchanges as fit in the interval, up to the packet limit")
    func packetsPerEvent() {
        // LE 1M, 251-byte packets: 2,088 + 150 + 80 + 150 µs; 50 ms fits 20.
        let oneMegabit = NegotiatedLink(central: .nRF52832, peripheral: .nRF52832)
        #expect(oneMegabit.phy == .le1M)
        #expect(oneMegabit.exchangeTime(mtu: 247) == .microseconds(2_468))
        #expect(oneMegabit.packetsPerEvent(mtu: 247) == 20)
        // 50 ms / 1,392 µs: 35 exchanges, no limit.
        #expect(NegotiatedLink(central: .nRF52840, peripheral: .nRF52840).packetsPerEvent(mtu: 247) == 35)
        // 15 ms fits 10 exchanges of LE 2M; iOS 18's limit is 3.
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: .watch).packetsPerEvent(mtu: 247) == 3)
        // Coded S=8 packets of 251 bytes take 17,804 µs an exchange: at a 7.5 ms interval the
        // link sends packets as long as fit in it instead (one an event).
        var farPeripheral = LinkProfile.unconstrained
        farPeripheral.phys = [.leCodedS8]
        var central = LinkProfile.unconstrained
        central.defaultConnectionInterval = .microseconds(7_500)
        let far = NegotiatedLink(central: central, peripheral: farPeripheral)
        #expect(far.phy == .leCodedS8)
        #expect(far.dataLength == 251)
        let fits = far.exchangeTime(mtu: 247)
        #expect(fits <= .microseconds(7_500))
        #expect(far.packetsPerEvent(mtu: 247) == 1)
        #expect(far.packets(l2capBytes: 251) == (251 + far.packetPayload - 1) / far.packetPayload)
        // One byte more would not fit.
        let onePayloadMore = LinkPHY.leCodedS8.airTime(payload: far.packetPayload + 1, encrypted: false)
        let empty = LinkPHY.leCodedS8.airTime(payload: 0, encrypted: false)
        #expect(onePayloadMore + empty + .microseconds(300) > .microseconds(7_500))
        // At 30 ms the whole data length fits.
        central.defaultConnectionInterval = .milliseconds(30)
        let slow = NegotiatedLink(central: central, peripheral: farPeripheral)
        #expect(slow.packetPayload == 251 && slow.exchangeTime(mtu: 247) == .microseconds(17_804))
        // Both ways at once, full packets each way: LE 1M at 50 ms fits 11 exchanges of
        // 2 × (2,088 + 150) µs; a peripheral answering 5 full packets of the central's then goes
        // on alone while the interval has room for its own exchanges.
        #expect(oneMegabit.packetsPerEventBothWays(mtu: 247) == 11)
        #expect(oneMegabit.peripheralPackets(afterCentral: 0, mtu: 247) == 20)
        #expect(oneMegabit.peripheralPackets(afterCentral: 11, mtu: 247) == 11)
        #expect(oneMegabit.peripheralPackets(afterCentral: 5, mtu: 247) == 5 + (50_000 - 5 * 4_476) / 2_468)
        #expect(oneMegabit.peripheralPackets(afterCentral: 20, mtu: 247) == 1)
    }

    // MARK: Negotiation

    @Test("The link takes the smaller data length, packet limit and ATT_MTU, and the fastest common PHY")
    func negotiationTakesWhatBothSupport() {
        let link = NegotiatedLink(central: .iPhoneiOS18, peripheral: .bluetooth4Accessory)
        #expect(link.dataLength == 27)
        #expect(link.phy == .le1M)
        #expect(link.packetLimit == 3)
        #expect(link.attMTU == 23)
        let both = NegotiatedLink(central: .iPhoneiOS18, peripheral: .watch)
        #expect(both.dataLength == 251)
        #expect(both.phy == .le2M)
        #expect(both.attMTU == 247)
        var limited = LinkProfile.watch
        limited.packetsPerConnectionEvent = 2
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: limited).packetLimit == 2)
        #expect(NegotiatedLink(central: .unconstrained, peripheral: limited).packetLimit == 2)
        #expect(NegotiatedLink(central: .unconstrained, peripheral: .unconstrained).packetLimit == nil)
        // Uncoded PHYs first (2M, then 1M), then coded S=2 before S=8.
        var coded = LinkProfile.unconstrained
        coded.phys = [.leCodedS2, .leCodedS8]
        #expect(NegotiatedLink(central: .unconstrained, peripheral: coded).phy == .leCodedS2)
        var longRange = LinkProfile.unconstrained
        longRange.phys = [.leCodedS8]
        #expect(NegotiatedLink(central: coded, peripheral: longRange).phy == .leCodedS8)
        // Nothing in common: LE 1M, which every controller supports.
        #expect(NegotiatedLink(central: longRange, peripheral: .bluetooth4Accessory).phy == .le1M)
    }

    @Test(
        "A central grants the shortest interval of its step inside what the peripheral asks for; an iPhone, Interval Min or its default"
    )
    func intervalNegotiation() {
        // iOS: multiples of 15 ms from 15 ms; the watch asks for 15–30 ms.
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: .watch).connectionInterval == .milliseconds(15))
        #expect(NegotiatedLink(central: .iPhoneiOS10, peripheral: .watch).connectionInterval == .milliseconds(15))
        // iOS 9 grants 20 ms at least (the 2013 guidelines): the watch's 15 ms is refused, and it
        // keeps 30 ms rather than moving the request up to 20 ms.
        #expect(NegotiatedLink(central: .iPhoneiOS9, peripheral: .watch).connectionInterval == .milliseconds(30))
        var asking = LinkProfile.watch
        asking.preferredConnectionIntervals = .milliseconds(20) ... .milliseconds(40)
        #expect(NegotiatedLink(central: .iPhoneiOS9, peripheral: asking).connectionInterval == .milliseconds(20))
        // 7.5–15 ms: an iPhone refuses an Interval Min under 15 ms (its default, not 15 ms); a
        // central of the Core specification's rules grants 7.5 ms.
        asking.preferredConnectionIntervals = .microseconds(7_500) ... .milliseconds(15)
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: asking).connectionInterval == .milliseconds(30))
        #expect(NegotiatedLink(central: .nRF52840, peripheral: asking).connectionInterval == .microseconds(7_500))
        // A first-fit central whose range starts above Interval Min grants its lowest.
        var picky = LinkProfile.nRF52840
        picky.connectionIntervals = .milliseconds(10) ... .seconds(4)
        #expect(NegotiatedLink(central: picky, peripheral: asking).connectionInterval == .milliseconds(10))
        // The same central answering as an iPhone does refuses it.
        picky.intervalRequestRule = .intervalMinOrDefault
        #expect(NegotiatedLink(central: picky, peripheral: asking).connectionInterval == .milliseconds(50))
        // 45–45 ms: a multiple of 15 ms, granted (the Interval Max condition is not modelled).
        asking.preferredConnectionIntervals = .milliseconds(45) ... .milliseconds(45)
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: asking).connectionInterval == .milliseconds(45))
        // Nothing asked: the central's default.
        #expect(
            NegotiatedLink(central: .iPhoneiOS18, peripheral: .unconstrained).connectionInterval == .milliseconds(30))
        // Asked for 7.5–10 ms, which iOS cannot grant: its default.
        var eager = LinkProfile.watch
        eager.preferredConnectionIntervals = .microseconds(7_500) ... .milliseconds(10)
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: eager).connectionInterval == .milliseconds(30))
        // A central with the specification's 1.25 ms step grants 7.5 ms.
        #expect(NegotiatedLink(central: .nRF52840, peripheral: eager).connectionInterval == .microseconds(7_500))
        // 16–40 ms on iOS: 30 ms, the first multiple of 15 ms in range.
        eager.preferredConnectionIntervals = .milliseconds(16) ... .milliseconds(40)
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: eager).connectionInterval == .milliseconds(30))
        // Asked for 3–4 s, beyond the 2 s iOS grants: its default.
        eager.preferredConnectionIntervals = .seconds(3) ... .seconds(4)
        #expect(NegotiatedLink(central: .iPhoneiOS18, peripheral: eager).connectionInterval == .milliseconds(30))
        #expect(NegotiatedLink(central: .nRF52840, peripheral: eager).connectionInterval == .seconds(3))
        // The accessory's 30–50 ms with the nRF52840: 30 ms.
        #expect(
            NegotiatedLink(central: .nRF52840, peripheral: .bluetooth4Accessory).connectionInterval
                == .milliseconds(30))
    }

    @Test("Timing negotiates only with a profile set and a nonzero interval; an unset side is unconstrained")
    func timingNegotiates() {
        #expect(LinkTiming.realistic.negotiated == nil)
        #expect(LinkTiming.instant.negotiated == nil)
        let timing = LinkTiming.realistic(central: .iPhoneiOS18)
        #expect(timing.peripheralProfile == .unconstrained)
        #expect(timing.negotiated == NegotiatedLink(central: .iPhoneiOS18, peripheral: .unconstrained))
        var peripheralOnly = LinkTiming.realistic
        peripheralOnly.peripheralProfile = .watch
        #expect(peripheralOnly.negotiated == NegotiatedLink(central: .unconstrained, peripheral: .watch))
        #expect(LinkTiming.realistic(central: .iPhoneiOS9, peripheral: .watch).centralProfile == .iPhoneiOS9)
    }
}
