#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The peripheral role: what an app does with `CBPeripheralManager`, as one async actor
/// interface. Tests inject a mock (BLEMockKit's `MockPeripheralManager`); apps inject a
/// CoreBluetooth-backed implementation.
public protocol PeripheralManaging: Actor {
    /// The manager's current state.
    var state: ManagerState { get }

    /// Waits until the state is settled and returns it (see ``CentralManaging/waitForPoweredOn()``).
    func waitForPoweredOn() async -> ManagerState

    /// A new stream of this manager's events; every call returns its own stream, and every
    /// stream receives every event from its creation on. Streams finish at shutdown.
    func events() -> AsyncStream<PeripheralEvent>

    /// Publishes a service and returns it with the handles the stack assigned.
    func add(_ service: GATTService) async throws -> LocalService

    /// Removes a published service; connected centrals see their copy invalidated.
    func remove(_ service: LocalService) async throws

    /// Removes every published service.
    func removeAllServices() async

    /// The published services, in handle order.
    var services: [LocalService] { get }

    /// Starts advertising; throws ``CoreBluetoothError/Code/alreadyAdvertising`` if it is. A
    /// mock refuses an advertisement no device could send with
    /// ``APIMisuseError/invalidArgument(_:)``: a field longer than one AD structure carries (254
    /// bytes of manufacturer data or local name, say), or more than the 1,650 bytes of
    /// extended advertising in all.
    func startAdvertising(_ advertisement: AdvertisementData) async throws

    /// Stops advertising.
    func stopAdvertising() async

    /// Whether the manager is advertising.
    var isAdvertising: Bool { get }

    /// Answers a read request (with the value from its offset on) or the first request of a
    /// write batch, with a result code (``ATTError/Code/success`` or an ATT error).
    func respond(to request: ATTRequest, withResult result: ATTError.Code, value: Data?) async throws

    /// Sends a notification or indication to subscribed centrals (all subscribers when
    /// `centrals` is `nil`). Returns `false` when the transmit queue is full: nothing was
    /// sent, and ``PeripheralEvent/readyToUpdateSubscribers`` follows when there is room.
    /// A value longer than a central's maximum update length is truncated for that central.
    func updateValue(_ value: Data, for characteristic: LocalCharacteristic, onSubscribedCentrals centrals: [UUID]?)
        async throws -> Bool

    /// The centrals subscribed to a characteristic.
    func subscribedCentrals(for characteristic: LocalCharacteristic) -> [RemoteCentral]

    /// Publishes an L2CAP channel and returns the PSM the stack allocated from the LE dynamic
    /// range (0x0080…0x00FF), optionally requiring an encrypted link (as
    /// `publishL2CAPChannel(withEncryption:)`). Centrals that open it produce
    /// ``PeripheralEvent/l2capChannelOpened(_:)`` events.
    func publishL2CAPChannel(requiresEncryption: Bool) async throws -> UInt16

    /// Stops accepting channels at a PSM and closes the channels open on it, as
    /// `unpublishL2CAPChannel(_:)` "closes any existing L2CAP channels using this PSM": both
    /// ends' incoming streams end and their sends fail, as when one end closes. The mock throws
    /// ``APIMisuseError/l2capChannelNotPublished(psm:)`` for a PSM it has not published.
    func unpublishL2CAPChannel(_ psm: UInt16) async throws

    /// Takes the manager out of service: it stops advertising, fails its waiting calls and
    /// finishes its event streams. Calls after it fail with
    /// ``APIMisuseError/managerShutDown(operation:)``.
    func shutDown()
}

extension PeripheralManaging {
    /// Answers a request without a value (writes, and reads answered with an error).
    public func respond(to request: ATTRequest, withResult result: ATTError.Code) async throws {
        try await respond(to: request, withResult: result, value: nil)
    }

    /// Sends a notification or indication to every subscribed central.
    @discardableResult
    public func updateValue(_ value: Data, for characteristic: LocalCharacteristic) async throws -> Bool {
        try await updateValue(value, for: characteristic, onSubscribedCentrals: nil)
    }
}
