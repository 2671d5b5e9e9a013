import Testing

@testable import BLECoreBluetooth

@Suite("PeripheralOperation", .timeLimit(.minutes(10)))
struct PeripheralOperationTests {
    @Test("Only adding a service counts as an add")
    func onlyAddIsAdd() {
        #expect(PeripheralOperation.add(service: 1).isAdd)
        #expect(!PeripheralOperation.startAdvertising.isAdd)
        #expect(!PeripheralOperation.publishL2CAPChannel.isAdd)
        #expect(!PeripheralOperation.unpublishL2CAPChannel(psm: 0x0080).isAdd)
    }

    @Test("Adds of different services are different keys")
    func addsAreDistinct() {
        #expect(PeripheralOperation.add(service: 1) != .add(service: 2))
        #expect(PeripheralOperation.unpublishL2CAPChannel(psm: 0x0080) != .unpublishL2CAPChannel(psm: 0x0081))
        #expect(PeripheralOperation.publishL2CAPChannel != .startAdvertising)
    }
}
