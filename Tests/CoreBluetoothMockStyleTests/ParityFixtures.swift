import BLECBM
import Foundation

// Fixtures in the shape of Nordic's nRF Blinky example's mock peripherals (its power pack: two
// battery services whose levels carry a user description), written for these tests.

extension CBMUUID {
    static let batteryService = CBMUUID(string: "180F")
    static let batteryLevel = CBMUUID(string: "2A19")
    static let userDescription = CBMUUID(string: "2901")
}

/// A battery level characteristic with a user description descriptor (no CCCD declared).
func batteryLevelMock() -> CBMCharacteristicMock {
    CBMCharacteristicMock(
        type: .batteryLevel, properties: [.notify, .read], descriptors: CBMDescriptorMock(type: .userDescription))
}

/// Answers the power pack's reads: 75 % and 100 %, described "Primary" and "Secondary".
final class PowerPackDelegate: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: immutable.
    let primary: CBMCharacteristicMock
    let secondary: CBMCharacteristicMock

    init(primary: CBMCharacteristicMock, secondary: CBMCharacteristicMock) {
        self.primary = primary
        self.secondary = secondary
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        if characteristic === primary { return .success(Data([75])) }
        if characteristic === secondary { return .success(Data([100])) }
        return .failure(CBMATTError(.invalidHandle))
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, Error>
    {
        if descriptor.characteristic === primary { return .success(Data("Primary".utf8)) }
        if descriptor.characteristic === secondary { return .success(Data("Secondary".utf8)) }
        return .failure(CBMATTError(.invalidHandle))
    }
}

/// A power pack out of range, advertising every 250 ms once in range.
func makePowerPack() -> CBMPeripheralSpec {
    let primary = batteryLevelMock()
    let secondary = batteryLevelMock()
    return
        CBMPeripheralSpec
        .simulatePeripheral(proximity: .outOfRange)
        .advertising(
            advertisementData: [
                CBMAdvertisementDataLocalNameKey: "Power Pack",
                CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.batteryService],
                CBMAdvertisementDataIsConnectable: true as NSNumber,
            ], withInterval: 0.250
        )
        .connectable(
            name: "Power Pack",
            services: [
                CBMServiceMock(type: .batteryService, primary: true, characteristics: primary),
                CBMServiceMock(type: .batteryService, primary: true, characteristics: secondary),
            ], delegate: PowerPackDelegate(primary: primary, secondary: secondary), connectionInterval: 0.045,
            mtu: 186
        )
        .build()
}
