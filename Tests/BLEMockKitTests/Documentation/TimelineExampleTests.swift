import BLECore
import BLEMockKit
import Foundation
import Testing

// The HTML timeline's examples in FixturesAndScenarios.md, verbatim.

@Suite("Documentation: the HTML timeline", .timeLimit(.minutes(10)))
struct TimelineExampleTests {
    @Test func aScenarioAsAnHTMLPage() async throws {
        let scenario = try Scenario(
            json: Data(
                #"""
                {"name": "read-the-location", "seed": 7, "mode": "realistic",
                 "peripheral": {"name": "Sensor", "services": [{"uuid": "180D", "characteristics": [
                   {"id": "loc", "uuid": "2A38", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "01"}}
                 ]}]},
                 "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"},
                           {"op": "read", "char": "loc", "expect": {"value": "01"}}]}
                """#.utf8), file: "read-the-location.json")
        let trace = await ScenarioRunner(scenario).run()
        let html = trace.html(for: scenario)  // what `mockble run FILE --format html` prints
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<b>seed</b> 7"))
        #expect(html.contains("read loc"))
    }

    @Test func aTestsOwnBridgeAsAnHTMLPage() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 42))
        let sensor = MockPeripheralManager(configuration: .init(name: "Thermometer"), bridge: bridge)
        try await sensor.startAdvertising(AdvertisementData(localName: "Thermometer"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(1))
        try await central.connect(sensor.identifier)

        let page = await bridge.timelinePage(title: "the thermometer connects")
        #expect(page.seed == 42)
        #expect(page.html.contains("connected, ATT_MTU"))
        // When a test fails, write the page where you can open it in a browser:
        // try page.html.write(to: URL(fileURLWithPath: "/tmp/thermometer.html"), atomically: true, encoding: .utf8)
    }
}
