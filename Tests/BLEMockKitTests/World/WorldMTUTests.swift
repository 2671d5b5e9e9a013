import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: MTU negotiation", .timeLimit(.minutes(10)))
struct WorldMTUTests {
    /// The ATT_MTU of a new link between a central and a peripheral preferring these modes.
    static func negotiated(central: MTUMode, peripheral: MTUMode, seed: UInt64 = 1) throws -> (WorldHarness, WorldLink)
    {
        try WorldLink.make(
            timing: .instant, seed: seed, central: .init(mtu: central),
            peripheral: .init(name: "Sensor", mtu: peripheral))
    }

    @Test(
        "A link's ATT_MTU is the smaller of the two fixed preferences, from 23 to 517",
        arguments: [(23, 517, 23), (517, 23, 23), (185, 247, 185), (251, 158, 158), (517, 517, 517), (100, 99, 99)])
    func fixedPreferences(central: Int, peripheral: Int, expected: Int) throws {
        let (harness, link) = try Self.negotiated(central: .fixed(central), peripheral: .fixed(peripheral))
        #expect(harness.world.linkMTU(central: link.central, peripheral: link.peripheral) == expected)
        #expect(harness.log(.connected).map(\.detail) == ["mtu=\(expected)"])
        #expect(
            harness.world.maximumUpdateValueLength(peripheral: link.peripheral, central: link.central)
                == min(expected - 3, 512))
        var world = harness.world
        let withoutResponse = try world.maximumWriteValueLength(
            central: link.central, peripheral: link.peripheral, type: .withoutResponse)
        let withResponse = try world.maximumWriteValueLength(
            central: link.central, peripheral: link.peripheral, type: .withResponse)
        // At ATT_MTU 516 and 517, MTU − 3 is more than an attribute holds (512 bytes), and a write of
        // that length is refused: which of the two the kit should change is an open question.
        #expect(withoutResponse == min(expected - 3, 512))
        #expect(withResponse == 512)
    }

    @Test(
        "A device prefers 185 as a central and 247 as a peripheral",
        arguments: [
            (MTUMode.device, MTUMode.device, 185), (.fixed(517), .device, 247), (.device, .fixed(517), 185),
            (.device, .fixed(150), 150), (.fixed(23), .device, 23),
        ])
    func devicePreferences(central: MTUMode, peripheral: MTUMode, expected: Int) throws {
        let (harness, link) = try Self.negotiated(central: central, peripheral: peripheral)
        #expect(harness.world.linkMTU(central: link.central, peripheral: link.peripheral) == expected)
    }

    @Test("A realistic preference draws, from each side's own stream, a real-world value in its range")
    func realisticPreferences() throws {
        var drawn: Set<Int> = []
        for seed in UInt64(0)..<32 {
            let (harness, link) = try WorldLink.make(
                timing: .instant, central: .init(mtu: .realistic(150...260), seed: seed),
                peripheral: .init(name: "Sensor", mtu: .fixed(517)))
            // The central's first draw of its MTU stream is its preference for the first link.
            var stream = SeededGenerator(seed: seed).derived("mtu")
            let expected = stream.element(from: [158, 185, 247, 251])
            let mtu = harness.world.linkMTU(central: link.central, peripheral: link.peripheral)
            #expect(mtu == expected, "seed \(seed)")
            drawn.insert(mtu ?? 0)
        }
        #expect(drawn == [158, 185, 247, 251])
    }

    @Test(
        "A realistic range holding no real-world value gives its lower bound",
        arguments: [(MTUMode.realistic(24...26), 24), (.realistic(28...150), 28), (.realistic(300...500), 300)])
    func realisticRangeWithoutCandidates(mode: MTUMode, expected: Int) throws {
        let (harness, link) = try Self.negotiated(central: mode, peripheral: .fixed(517))
        #expect(harness.world.linkMTU(central: link.central, peripheral: link.peripheral) == expected)
    }

    @Test(
        "A central preference outside 23…517 is refused before connecting, with the problem named",
        arguments: [
            (MTUMode.fixed(22), "ATT_MTU 22 is outside 23…517; use a value in that range"),
            (.fixed(518), "ATT_MTU 518 is outside 23…517; use a value in that range"),
            (.realistic(518...600), "the ATT_MTU range 518...600 has no value in 23…517"),
            (.realistic(0...22), "the ATT_MTU range 0...22 has no value in 23…517"),
        ])
    func invalidCentralPreference(mode: MTUMode, problem: String) throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral()
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let central = harness.addCentral(.init(mtu: mode))
        #expect(throws: APIMisuseError.invalidConfiguration("MockCentralManager.Configuration.mtu: \(problem)")) {
            try harness.startScan(central)
        }
        let connect = harness.perform(.connect(central: central, peripheral: peripheral, timeout: nil))
        #expect(
            harness.error(of: connect) as? APIMisuseError
                == .invalidConfiguration("MockCentralManager.Configuration.mtu: \(problem)"))
        #expect(harness.world.links.keys.isEmpty)
        #expect(harness.world.attPDUCount == 0)
    }

    @Test("A peripheral preference outside 23…517 is refused before advertising, so nobody can link to it")
    func invalidPeripheralPreference() throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral(.init(mtu: .fixed(518)))
        #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockPeripheralManager.Configuration.mtu: ATT_MTU 518 is outside 23…517; use a value in that range")
        ) {
            try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        }
        #expect(!harness.world.isAdvertising(peripheral: peripheral))
    }

    @Test("Each link negotiates its own ATT_MTU: two centrals with different preferences on one peripheral")
    func perLinkMTU() throws {
        var (harness, first) = try WorldLink.make(
            timing: .instant, central: .init(mtu: .fixed(23)), peripheral: .init(name: "Sensor", mtu: .fixed(247)))
        let other = harness.addCentral(.init(mtu: .fixed(185)))
        let second = try WorldLink.connect(other, to: first.peripheral, service: first.service, in: &harness)
        #expect(harness.world.linkMTU(central: first.central, peripheral: first.peripheral) == 23)
        #expect(harness.world.linkMTU(central: second.central, peripheral: second.peripheral) == 185)
        #expect(harness.log(.connected).map(\.detail) == ["mtu=23", "mtu=185"])
    }
}
