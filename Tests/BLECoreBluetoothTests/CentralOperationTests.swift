import Testing

@testable import BLECoreBluetooth

@Suite("CentralOperation", .timeLimit(.minutes(10)))
struct CentralOperationTests {
    private static let all: [CentralOperation] = [
        .connect(peripheral: UUIDs.first), .discoverServices(peripheral: UUIDs.first),
        .discoverIncludedServices(peripheral: UUIDs.first, service: 1),
        .discoverCharacteristics(peripheral: UUIDs.first, service: 1),
        .discoverDescriptors(peripheral: UUIDs.first, characteristic: 2),
        .readCharacteristic(peripheral: UUIDs.first, characteristic: 2),
        .writeCharacteristic(peripheral: UUIDs.first, characteristic: 2),
        .setNotifyValue(peripheral: UUIDs.first, characteristic: 2),
        .readDescriptor(peripheral: UUIDs.first, descriptor: 3),
        .writeDescriptor(peripheral: UUIDs.first, descriptor: 3), .readRSSI(peripheral: UUIDs.first),
        .openL2CAPChannel(peripheral: UUIDs.first, psm: 0x0080),
    ]

    @Test("Every operation names its peripheral")
    func everyOperationNamesItsPeripheral() {
        #expect(Self.all.allSatisfy { $0.peripheral == UUIDs.first })
    }

    @Test("Only connecting does not need a link")
    func onlyConnectNeedsNoLink() {
        #expect(Self.all.filter { !$0.needsLink } == [.connect(peripheral: UUIDs.first)])
    }

    @Test("Operations on different attributes are different keys")
    func keysAreDistinct() {
        #expect(Set(Self.all).count == Self.all.count)
        #expect(
            CentralOperation.readCharacteristic(peripheral: UUIDs.first, characteristic: 2)
                != .readCharacteristic(peripheral: UUIDs.second, characteristic: 2))
        #expect(
            CentralOperation.openL2CAPChannel(peripheral: UUIDs.first, psm: 0x0080)
                != .openL2CAPChannel(peripheral: UUIDs.first, psm: 0x0081))
    }
}
