import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// The shapes app code gives CoreBluetooth's errors: ATT codes as static members of the error
/// type (`respond(to:withResult: CBATTError.invalidOffset)`), errors matched by code in `catch`
/// clauses and `switch` cases, and the peripheral role's authorization under its pre-iOS 13 name.
@Suite("CoreBluetooth's error shapes", .timeLimit(.minutes(10)))
struct ErrorShapeTests {
    @Test("Every ATT code is a static member of CBMATTError, with its own raw value")
    func attCodesAreStaticMembers() {
        let members: [(CBMATTError.Code, Int)] = [
            (CBMATTError.success, 0x00), (CBMATTError.invalidHandle, 0x01), (CBMATTError.readNotPermitted, 0x02),
            (CBMATTError.writeNotPermitted, 0x03), (CBMATTError.invalidPdu, 0x04),
            (CBMATTError.insufficientAuthentication, 0x05), (CBMATTError.requestNotSupported, 0x06),
            (CBMATTError.invalidOffset, 0x07), (CBMATTError.insufficientAuthorization, 0x08),
            (CBMATTError.prepareQueueFull, 0x09), (CBMATTError.attributeNotFound, 0x0A),
            (CBMATTError.attributeNotLong, 0x0B), (CBMATTError.insufficientEncryptionKeySize, 0x0C),
            (CBMATTError.invalidAttributeValueLength, 0x0D), (CBMATTError.unlikelyError, 0x0E),
            (CBMATTError.insufficientEncryption, 0x0F), (CBMATTError.unsupportedGroupType, 0x10),
            (CBMATTError.insufficientResources, 0x11),
        ]
        #expect(members.map(\.0.rawValue) == members.map(\.1))
    }

    @Test("catch CBMError.code catches a CoreBluetooth error with that code and no other")
    func catchByCoreBluetoothCode() {
        func caught(_ error: any Error) -> String {
            do {
                throw error
            } catch CBMError.connectionTimeout {
                return "connectionTimeout"
            } catch CBMError.peripheralDisconnected {
                return "peripheralDisconnected"
            } catch {
                return "other"
            }
        }
        #expect(caught(CBMError(.connectionTimeout)) == "connectionTimeout")
        #expect(caught(CBMError(.peripheralDisconnected)) == "peripheralDisconnected")
        #expect(caught(CBMError(.unknown)) == "other")
        // An NSError of CoreBluetooth's domain matches by its code; another domain's does not,
        // nor does an ATT error with the same number.
        #expect(caught(NSError(domain: CBMErrorDomain, code: 6)) == "connectionTimeout")
        #expect(caught(NSError(domain: "Other", code: 6)) == "other")
        #expect(caught(CBMATTError(rawCode: 6)) == "other")
    }

    @Test("A switch over an error matches CBMATTError's codes, application codes by their number")
    func switchByATTCode() {
        func name(_ error: any Error) -> String {
            switch error {
            case CBMATTError.readNotPermitted: "readNotPermitted"
            case CBMATTError.insufficientAuthentication: "insufficientAuthentication"
            default: "other"
            }
        }
        #expect(name(CBMATTError(.readNotPermitted)) == "readNotPermitted")
        #expect(name(CBMATTError(.insufficientAuthentication)) == "insufficientAuthentication")
        #expect(name(NSError(domain: CBMATTErrorDomain, code: 2)) == "readNotPermitted")
        #expect(name(CBMATTError(rawCode: 0x80)) == "other")
        #expect(name(CBMError(.invalidHandle)) == "other")
        #expect(name(CancellationError()) == "other")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A peripheral manager's read answered with a static ATT code reaches the central with that code")
    func respondWithStaticCode() async throws {
        let bridge = MockBLEBridge(seed: 41)
        let error = try await bridge.run { () -> (any Error)? in
            let app = RefusingPeripheral(queue: DispatchQueue(label: "refusing"))
            let central = MockCentralManager(bridge: bridge)
            let peripheral = try await central.connectToFirst(advertising: RefusingPeripheral.service)
            let characteristic = try await central.characteristic("FFA1", of: peripheral)
            do {
                _ = try await central.readValue(for: characteristic)
                return nil
            } catch {
                _ = app
                return error
            }
        }
        #expect(error as? ATTError == ATTError(.invalidOffset))
    }

    @Test("The peripheral role's authorizationStatus() follows the bridge's authorization")
    func peripheralAuthorizationStatus() async throws {
        #expect(CBMPeripheralManagerAuthorizationStatus(.notDetermined) == .notDetermined)
        #expect(CBMPeripheralManagerAuthorizationStatus(.restricted) == .restricted)
        #expect(CBMPeripheralManagerAuthorizationStatus(.denied) == .denied)
        #expect(CBMPeripheralManagerAuthorizationStatus(.allowedAlways) == .authorized)
        #expect(CBMPeripheralManagerAuthorizationStatus.authorized.rawValue == 3)
        let bridge = MockBLEBridge(seed: 42)
        let (before, after) = MockBLEBridge.$current.withValue(bridge) {
            () -> (CBMPeripheralManagerAuthorizationStatus, CBMPeripheralManagerAuthorizationStatus) in
            let before = CBMPeripheralManager.authorizationStatus()
            let manager = CBMCentralManager(bridge: bridge, delegate: nil, queue: DispatchQueue(label: "auth"))
            manager.simulateAuthorization(.denied)
            return (before, CBMPeripheralManager.authorizationStatus())
        }
        #expect(before == .authorized)
        #expect(after == .denied)
    }
}

/// A peripheral app that refuses every read of its one characteristic with
/// `CBMATTError.invalidOffset`, the static member.
private final class RefusingPeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` is set once in `init`, then only read.
    static let service = CBMUUID(string: "FFA0")
    private var manager: CBMPeripheralManager!

    init(queue: DispatchQueue) {
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: queue)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let characteristic = CBMMutableCharacteristic(
            type: CBMUUID(string: "FFA1"), properties: [.read], value: nil, permissions: [.readable])
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [characteristic]
        peripheral.add(service)
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        peripheral.respond(to: request, withResult: CBMATTError.invalidOffset)
    }
}
