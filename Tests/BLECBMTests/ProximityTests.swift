import BLECBM
import BLEMockKit
import Testing

/// `CBMProximity` keeps CoreBluetoothMock's names and RSSI values (its `CBMPeripheralSpec.swift`:
/// `immediate` -40, `near` -70, `far` -100), so code migrating from it sees the numbers it saw
/// there; the kit's own `Proximity` has the same cases with the same values.
@Suite("CBMProximity: CoreBluetoothMock's names and RSSI values", .timeLimit(.minutes(10)))
struct ProximityTests {
    @Test("immediate is -40 dBm, near -70, far -100, and out of range 127, as in CoreBluetoothMock")
    func valuesMatchCoreBluetoothMock() {
        #expect(CBMProximity.immediate.RSSI == -40)
        #expect(CBMProximity.near.RSSI == -70)
        #expect(CBMProximity.far.RSSI == -100)
        #expect(CBMProximity.outOfRange.RSSI == 127)
    }

    @Test("The kit's Proximity has the same cases with the same values")
    func kitValues() {
        #expect(Proximity.immediate.rssi == -40)
        #expect(Proximity.near.rssi == -70)
        #expect(Proximity.far.rssi == -100)
        #expect(Proximity.outOfRange.rssi == nil)
    }
}
