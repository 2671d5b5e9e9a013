import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A manager the app made again after letting go of its predecessor (same identifier, the
/// predecessor shut down) gets a fresh record: what was the manager's goes, what belongs to the
/// device, its app or the system stays.
@Suite("World: a manager made again after its predecessor shut down", .timeLimit(.minutes(10)))
struct WorldRestartTests {
    static let later = VirtualClock.Instant.zero.advanced(by: .milliseconds(200))

    @Test("A peripheral made again has nothing of its predecessor's own, and keeps its place and background")
    func aPeripheralStartsAfresh() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral(.init(stateTransition: .realistic(duration: .milliseconds(100))))
        harness.mutate { world in
            world.setBackground(.peripheral(peripheral), true)
            world.apply(.proximity(peripheral: peripheral, .far))
            world.setAdvertisingSets(
                [
                    AdvertisingSet(
                        advertisement: AdvertisementData(localName: "Set"), interval: .milliseconds(50), delay: .zero,
                        once: false)
                ], of: peripheral)
            world.shutDown(peripheral: peripheral)
            world.restart(peripheral: peripheral, configuration: .init())
        }
        let record = try #require(harness.world.peripherals[peripheral])
        #expect(record.state == .poweredOn)
        #expect(!record.isShutDown)
        #expect(record.advertisement == nil)
        #expect(harness.world.advertisingSets[peripheral] == nil)
        #expect(record.proximity == .far)
        #expect(record.isInBackground)
        harness.advance(to: Self.later)
        #expect(harness.world.state(of: .peripheral(peripheral)) == .poweredOn)
        let states = harness.log(.stateChanged).filter { $0.peripheral == peripheral }.map(\.detail)
        #expect(Array(states.drop { $0 != "shut down" }.dropFirst()) == ["poweredOn"])
    }

    @Test("A central made again keeps its app's background, and none of its predecessor's start-up steps")
    func aCentralStartsAfresh() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let central = harness.addCentral(.init(stateTransition: .realistic(duration: .milliseconds(100))))
        harness.mutate { world in
            world.setBackground(.central(central), true)
            world.shutDown(central: central)
            world.restart(central: central, configuration: .init())
        }
        let record = try #require(harness.world.centrals[central])
        #expect(record.state == .poweredOn)
        #expect(!record.isShutDown)
        #expect(record.isInBackground)
        harness.advance(to: Self.later)
        #expect(harness.world.state(of: .central(central)) == .poweredOn)
        let states = harness.log(.stateChanged).filter { $0.central == central }.map(\.detail)
        #expect(Array(states.drop { $0 != "shut down" }.dropFirst()) == ["poweredOn"])
    }

    @Test("A peripheral made again has none of its predecessor's services; a live one is not made again")
    func servicesGoWithTheShutDownPeripheral() throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral()
        _ = try harness.addService(TestPeripherals.heartRate, to: peripheral)
        harness.mutate { $0.restart(peripheral: peripheral, configuration: .init()) }
        #expect(harness.world.peripherals[peripheral]?.database.localServices.count == 1)
        harness.mutate { world in
            world.shutDown(peripheral: peripheral)
            world.restart(peripheral: peripheral, configuration: .init())
        }
        #expect(harness.world.peripherals[peripheral]?.database.localServices.isEmpty == true)
        #expect(harness.world.peripheralOrder == [peripheral])
    }
}
