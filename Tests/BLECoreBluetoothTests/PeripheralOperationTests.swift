import Testing

@testable import BLECoreBluetooth

@Suite("PeripheralOperation")
struct PeripheralOperationTests {
    @Test("Only adding a service counts as an add")
    func onlyAddIsAdd() {
        #expect(PeripheralOperation.add(service: 1).isAdd)
        #expect(!PeripheralOperation.startAdvertising.isAdd)
    }

    @Test("Adds of different services are different keys")
    func addsAreDistinct() {
        #expect(PeripheralOperation.add(service: 1) != .add(service: 2))
    }
}
