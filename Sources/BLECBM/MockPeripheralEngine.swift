import BLECore
import BLEMockKit
import Foundation

/// A ``CBMPeripheralManager`` on a bridge: the app's calls become commands on a
/// ``MockPeripheralManager`` (answering requests by hand, as CoreBluetooth's peripheral role
/// does), and its events come back as delegate callbacks on the app's queue.
///
/// `updateValue` answers synchronously, as CoreBluetooth's does, from a mirror of the update
/// queue: the updates the bridge holds (reported each time some leave) plus those the app sent
/// that have not reached the bridge yet, against the queue's capacity and the subscribers the
/// bridge reported.
final class MockPeripheralEngine: PeripheralBackend, @unchecked Sendable {
    // @unchecked Sendable: every mutable property is only read and written with `lock` held.
    typealias Command = @Sendable (isolated MockPeripheralManager) -> Void

    let peripheral: MockPeripheralManager
    let lane: FrontEndLane<MockPeripheralManager>
    let lock = Lock()
    private weak var manager: CBMPeripheralManager?
    private var mirroredState: CBMManagerState = .unknown
    /// Whether the manager advertises (paused while Bluetooth is off: see ``AdvertisingMirror``).
    private var advertising = AdvertisingMirror()
    /// How many times the app stopped advertising: a start made before a stop does not mark the
    /// manager advertising when the bridge gets to it after the stop.
    private var advertisingStops: UInt64 = 0
    /// Published characteristics by handle, and the services the app added, by object.
    private var characteristics: [UInt16: CBMMutableCharacteristic] = [:]
    /// The services the app added, by object, each kept with what it stands for (kept alive, as
    /// CoreBluetooth keeps the services in its database: the app may let go of its reference,
    /// and the characteristics still name their service).
    private var published: [ObjectIdentifier: (object: CBMMutableService, local: LocalService)] = [:]
    /// Subscribed centrals per characteristic handle, in the order they subscribed.
    private var subscribers: [UInt16: [CBMCentral]] = [:]
    /// The object for each central, with the update length last reported for it (the object
    /// takes it in the order of the app's callbacks).
    private var centrals: [UUID: (object: CBMCentral, reportedLength: Int)] = [:]
    /// The updates the bridge holds, and those the app sent that the app's queue has not heard
    /// reach it: changed in the order of the app's callbacks (each change delivered on its queue
    /// as the bridge makes it), so a callback's `updateValue` decides from the queue as of that
    /// callback, and the same seed gives the same decisions on every run.
    private var queuedUpdates = 0
    private var updatesInFlight = 0
    /// Updates the app was told were sent (`updateValue` returned `true`) for which the
    /// simulation's queue had no room when they reached it, oldest first: sent in that order, and
    /// before any later update, as the queue drains (see ``send(_:_:)``). The app decides from
    /// the subscribers it has heard of, so an update reaching a central whose subscription its
    /// callback has not reached yet takes more of the queue than the app counted. (Read and
    /// written on the bridge's executor, with `lock` held.)
    private var heldUpdates: [AcceptedUpdate] = []
    /// How many `peripheralManagerIsReady(toUpdateSubscribers:)` callbacks the app's queue has
    /// reached (changed there, in the order of the app's callbacks): a refusal notes the count it
    /// was made after.
    private var readiesHeard = 0
    /// How many of those callbacks the bridge has handed to the app's queue, and whether the app
    /// is owed one: a refusal that reached the bridge with no ready handed over after the point
    /// the app refused at (only then: the queue filling with updates the app was told were sent
    /// owes it nothing, and a refusal made before a ready the app has yet to hear is answered by
    /// that ready). Both are read and written on the bridge's executor, so what the app hears
    /// depends only on the order of its calls and callbacks, not on which thread ran first.
    private var readiesTold = 0
    private var readyOwed = false
    /// The manager left `poweredOn`: CoreBluetooth cleared its local database, so what is
    /// mirrored above goes once it is powered on again (not at once: the simulation still
    /// reports the unsubscriptions the power loss caused).
    private var databaseCleared = false
    private var invalidated = false
    private var misuses: [String] = []
    /// The requests after the first of each write batch the app was handed and has not answered,
    /// by id: each with its batch's first request and its place in the batch (counted from 0;
    /// the answer goes to the first). A batch whose central went away unanswered is forgotten
    /// when the app answers one of its requests or the next batch arrives.
    private var laterWriteParts: [UInt64: (first: UInt64, place: Int)] = [:]
    /// Where the bridge keeps the calls that got no callback (for stall reports and failed tests).
    private let unansweredCalls: UnansweredCallLog
    /// The simulated system the manager was made on, when it found its bridge through one (not
    /// when made on a bridge explicitly, or on the current test's bridge).
    private let system: SimulatedSystem?

    init(
        bridge: MockBLEBridge, system: SimulatedSystem?, queue: DispatchQueue?, options: [String: Any]? = nil,
        configuration: MockPeripheralManager.Configuration?
    ) {
        self.system = system
        var configuration =
            configuration
            ?? (bridge.configuration.timing.isInstant ? .fast : .realistic(seed: bridge.configuration.seed))
        if let restoreIdentifier = options?[CBMPeripheralManagerOptionRestoreIdentifierKey] as? String {
            configuration.restoreIdentifier = restoreIdentifier
        }
        configuration.requestHandling = .manual
        if let state = MockCentralEngine.initialState(on: bridge) {
            configuration.initialState = state
            // A state that never settles (unknown, resetting) stays until a test changes it,
            // as in CoreBluetoothMock: the kit's configuration says so with `.stuck`.
            if let holding = StateTransition.holding(state) { configuration.stateTransition = holding }
        }
        // A new CBPeripheralManager's first state callback carries its real state.
        if case .realistic(let duration) = configuration.stateTransition {
            configuration.stateTransition = .delayed(duration)
        }
        let peripheral = MockPeripheralManager(
            configuration: configuration, bridge: bridge, joinsAtFirstCall: true,
            identifierStream: CommandQueue.identifierStream(madeOn: queue))
        self.peripheral = peripheral
        lane = FrontEndLane(bridge: bridge, target: peripheral, key: peripheral.identifier, queue: queue)
        unansweredCalls = UnansweredCallLog.of(bridge)
        Self.registry(on: bridge).add(self)
    }

    deinit {
        // A manager the app lets go of leaves the air, as CoreBluetooth's does (its requests go
        // with it, and with them the answers it owed, its services and its advertising); a
        // manager the app makes next with the same restore identifier starts afresh (its
        // commands come after these).
        peripheral.releaseIdentifier()
        lane.releaseCommand { peripheral in
            peripheral.detachFrontEnd()
            peripheral.shutDown()
        }
    }

    /// The peripheral engines on one bridge, held weakly.
    typealias Registry = WeakList<MockPeripheralEngine>

    static func registry(on bridge: MockBLEBridge) -> Registry {
        bridge.frontEndSettings.object(for: ObjectIdentifier(Registry.self)) { Registry() }
    }

    /// The peripheral engines on a bridge, oldest first.
    static func engines(on bridge: MockBLEBridge) -> [MockPeripheralEngine] { registry(on: bridge).all }

    /// The system this manager was on was uninstalled: it leaves the air, its delegate hears the
    /// state `unknown`, and later calls are ignored.
    func invalidate() {
        let first = lock.withLock { () -> Bool in
            defer { invalidated = true }
            return !invalidated
        }
        guard first else { return }
        lane.command { [self] peripheral in
            peripheral.detachFrontEnd()
            peripheral.shutDown()
            lane.deliver { [self] in
                lock.withLock {
                    mirroredState = .unknown
                    advertising.stateChanged(to: .unknown)
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.peripheralManagerDidUpdateState(manager)
            }
        }
    }

    func attach(_ manager: CBMPeripheralManager) {
        lock.withLock { self.manager = manager }
        if MockCentralEngine.joinsUninstalledSystem(system, bridge: lane.bridge) { return invalidate() }
        let frontEnd = PeripheralFrontEnd(
            event: { [weak self] event in self?.handle(event) },
            updateQueue: { [weak self] queued in
                guard let self else { return }
                lane.deliver { [self] in lock.withLock { queuedUpdates = queued } }
            })
        // A manager refused for another live manager's restore identifier never joins the
        // bridge: it reports `unsupported`, as a refused central does, and its misuses say why.
        if let problem = peripheral.duplicateProblem {
            return lane.command { [self] _ in
                misuse("init(delegate:queue:options:): \(problem)")
                handle(.stateChanged(.unsupported))
            }
        }
        lane.command { $0.attachFrontEnd(frontEnd) }
    }

    /// The manager and its delegate, if both are still there.
    private var managerAndDelegate: (CBMPeripheralManager, any CBMPeripheralManagerDelegate)? {
        guard let manager = lock.withLock({ manager }), let delegate = manager.delegate else { return nil }
        return (manager, delegate)
    }

    /// Calls the delegate on the app's queue.
    private func tell(_ body: @escaping @Sendable (CBMPeripheralManager, any CBMPeripheralManagerDelegate) -> Void) {
        lane.deliver { [self] in
            guard let (manager, delegate) = managerAndDelegate else { return }
            body(manager, delegate)
        }
    }

    var state: CBMManagerState { lock.withLock { invalidated ? .unknown : mirroredState } }

    /// The calls CoreBluetooth would have refused with an "API MISUSE" log and ignored, oldest
    /// first.
    var apiMisuses: [String] { lock.withLock { misuses } }

    /// The manager as reports name it: `CBMPeripheralManager` and the start of its identifier.
    var name: String { "CBMPeripheralManager \(peripheral.identifier.uuidString.prefix(8))" }

    /// Whether a call may go ahead: CoreBluetooth's peripheral manager accepts commands only
    /// while powered on (otherwise it logs "API MISUSE" and ignores them, with no callback),
    /// which is noted as a misuse.
    private func poweredOn(_ call: String) -> Bool {
        lock.withLock { lockedPoweredOn(call) }
    }

    /// Notes a call CoreBluetooth would refuse.
    private func misuse(_ message: String) {
        lock.withLock { lockedMisuse(message) }
    }

    /// With the lock held: ``misuse(_:)``.
    private func lockedMisuse(_ message: String) {
        misuses.append(message)
        unansweredCalls.note("\(name), ignored: \(message)")
    }

    /// With the lock held: ``poweredOn(_:)``.
    private func lockedPoweredOn(_ call: String) -> Bool {
        let current = invalidated ? .unknown : mirroredState
        guard current == .poweredOn else {
            lockedMisuse("\(call): the peripheral manager is not powered on (\(current))")
            return false
        }
        return true
    }

    var isAdvertising: Bool { lock.withLock { advertising.isAdvertising } }

    /// The first of `objects` (the characteristics of a service being added) that is already
    /// published in a service of this manager, or that appears twice among them, with the
    /// service it belongs to. Called under `lock`.
    private func sharedCharacteristic(
        among objects: [CBMMutableCharacteristic]
    ) -> (CBMMutableCharacteristic, CBMService)? {
        for (index, object) in objects.enumerated() {
            if let owner = published.values.first(where: { entry in
                entry.local.characteristics.contains { characteristics[$0.handle] === object }
            }) {
                return (object, owner.object)
            }
            if objects[..<index].contains(where: { $0 === object }), let service = object.service {
                return (object, service)
            }
        }
        return nil
    }

    func add(_ service: CBMMutableService) {
        guard poweredOn("add") else { return }
        let characteristicObjects = (service.characteristics ?? []).compactMap { $0 as? CBMMutableCharacteristic }
        let gatt = GATTService(
            uuid: service.uuid.bluetoothUUID, isPrimary: service.isPrimary,
            includedServices: (service.includedServices ?? []).map(\.uuid.bluetoothUUID),
            characteristics: characteristicObjects.map(\.gattCharacteristic))
        // A descriptor CoreBluetooth's initializer refuses (the app would have crashed making it)
        // is refused here, in the order of the app's calls, as a parameter it cannot take.
        let refusedDescriptor = characteristicObjects.lazy.flatMap { characteristic in
            (characteristic.descriptors ?? []).lazy.compactMap { descriptor in
                (descriptor as? CBMMutableDescriptor)?.creationProblem.map {
                    "add: CBMMutableDescriptor(type: \(descriptor.uuid), value: \(Self.describe(descriptor.value))) of "
                        + "characteristic \(characteristic.uuid): CoreBluetooth raises NSInternalInconsistencyException "
                        + "(\"\($0)\") as it is made, and the app crashes"
                }
            }
        }.first
        // Properties CoreBluetooth's documentation rules out for a characteristic the app makes.
        let refused = refusedDescriptor ?? characteristicObjects.lazy.compactMap(Self.refusedProperties).first
        if let refused {
            lane.command { [self] _ in
                misuse(refused)
                let failure = CBMError(.invalidParameters)
                tell { manager, delegate in delegate.peripheralManager(manager, didAdd: service, error: failure) }
            }
            return
        }
        for characteristic in characteristicObjects {
            characteristic.lock.withLock { characteristic.setService(service) }
        }
        lane.command { [self] peripheral in
            // The same object published twice would put a second copy on the air that `remove`
            // could not reach (its handles would map to the one object): refused, in the order of
            // the app's calls, as a parameter CoreBluetooth cannot take.
            if lock.withLock({ published[ObjectIdentifier(service)] != nil }) {
                misuse("add: service \(service.uuid) is already published by this manager (remove it first)")
                let failure = CBMError(.invalidParameters)
                tell { manager, delegate in delegate.peripheralManager(manager, didAdd: service, error: failure) }
                return
            }
            // So is one characteristic object in two places: a characteristic has one service,
            // and updates to the object could reach only one of its copies on the air (which
            // one would rest on a dictionary's order, differing from process to process).
            if let (object, owner) = lock.withLock({ sharedCharacteristic(among: characteristicObjects) }) {
                object.lock.withLock { object.setService(owner) }
                let place =
                    owner === service
                    ? "appears twice in service \(service.uuid)"
                    : "is already in service \(owner.uuid), published by this manager"
                misuse(
                    "add: characteristic \(object.uuid) of service \(service.uuid) \(place); a characteristic "
                        + "belongs to one service (make another CBMMutableCharacteristic)")
                let failure = CBMError(.invalidParameters)
                tell { manager, delegate in delegate.peripheralManager(manager, didAdd: service, error: failure) }
                return
            }
            do {
                let local = try peripheral.add(gatt)
                lock.withLock {
                    published[ObjectIdentifier(service)] = (service, local)
                    for (object, published) in zip(characteristicObjects, local.characteristics) {
                        characteristics[published.handle] = object
                    }
                }
                tell { manager, delegate in delegate.peripheralManager(manager, didAdd: service, error: nil) }
            } catch {
                // A service description CoreBluetooth rejects (a cached value on a characteristic
                // that can be written, say: an exception on a device) is the app's misuse too.
                if case .invalidService = error as? APIMisuseError {
                    misuse("add: \(error)")
                }
                let failure = CBMError.bridging(error)
                tell { manager, delegate in delegate.peripheralManager(manager, didAdd: service, error: failure) }
            }
        }
    }

    /// Why CoreBluetooth does not take `characteristic`'s properties, if it does not: its
    /// documentation rules out `broadcast` and `extendedProperties` on a `CBMutableCharacteristic`
    /// (the stack manages both).
    private static func refusedProperties(_ characteristic: CBMMutableCharacteristic) -> String? {
        let names = [(CBMCharacteristicProperties.broadcast, "broadcast"), (.extendedProperties, "extendedProperties")]
            .filter { characteristic.properties.contains($0.0) }.map(\.1)
        guard !names.isEmpty else { return nil }
        return "add: characteristic \(characteristic.uuid) has the \(names.joined(separator: " and ")) "
            + "\(names.count == 1 ? "property" : "properties"), which a CBMutableCharacteristic cannot have "
            + "(CoreBluetooth's documentation: the stack manages both)"
    }

    /// A descriptor's value as a misuse names it: its type, and its text or bytes.
    private static func describe(_ value: Any?) -> String {
        switch value {
        case nil: "nil"
        case let string as String: "\"\(string)\""
        case let data as Data: "Data(\(data.count) bytes)"
        case let value?: "\(type(of: value))(\(value))"
        }
    }

    func remove(_ service: CBMMutableService) {
        guard poweredOn("remove") else { return }
        let key = ObjectIdentifier(service)
        if let (local, objects) = lock.withLock({ unpublish(key) }) {
            Self.unsubscribeAll(objects)
            lane.command { try? $0.remove(local) }
            return
        }
        // Not published yet: an add the bridge has not got to (or none). The service goes once
        // the add has been applied, in the order of the app's calls.
        lane.command { [self] peripheral in
            guard let (local, objects) = lock.withLock({ unpublish(key) }) else { return }
            Self.unsubscribeAll(objects)
            try? peripheral.remove(local)
        }
    }

    /// With the lock held: forgets a published service, its characteristics and their
    /// subscribers, returning what it stood for and its characteristic objects.
    private func unpublish(_ key: ObjectIdentifier) -> (LocalService, [CBMMutableCharacteristic])? {
        guard let local = published.removeValue(forKey: key)?.local else { return nil }
        return (local, local.characteristics.compactMap { forget($0.handle) })
    }

    func removeAllServices() {
        guard poweredOn("removeAllServices") else { return }
        let objects = lock.withLock { forgetAll() }
        Self.unsubscribeAll(objects)
        lane.command { $0.removeAllServices() }
    }

    /// With the lock held: drops every published service, characteristic and subscriber,
    /// returning the characteristic objects.
    private func forgetAll() -> [CBMMutableCharacteristic] {
        defer {
            published.removeAll()
            characteristics.removeAll()
            subscribers.removeAll()
        }
        return Array(characteristics.values)
    }

    /// With the lock held: drops a published characteristic and its subscribers (the simulation
    /// ends subscriptions to a removed service without telling the app), returning its object.
    private func forget(_ handle: UInt16) -> CBMMutableCharacteristic? {
        subscribers[handle] = nil
        return characteristics.removeValue(forKey: handle)
    }

    /// Empties the subscribed centrals of characteristics no longer published.
    private static func unsubscribeAll(_ objects: [CBMMutableCharacteristic]) {
        for characteristic in objects { characteristic.lock.withLock { characteristic.subscribers.removeAll() } }
    }

    func startAdvertising(_ advertisementData: [String: Any]?) {
        guard poweredOn("startAdvertising") else { return }
        let name = advertisementData?[CBMAdvertisementDataLocalNameKey]
        let services = advertisementData?[CBMAdvertisementDataServiceUUIDsKey]
        // A value of another type makes CoreBluetooth raise an exception (the app crashes on a
        // device): noted, and the key left out.
        if let name, !(name is String) {
            misuse("startAdvertising: CBMAdvertisementDataLocalNameKey takes a String, not \(type(of: name)); left out")
        }
        if let services, !(services is [CBMUUID]) {
            misuse(
                "startAdvertising: CBMAdvertisementDataServiceUUIDsKey takes an array of CBMUUID, not \(type(of: services)); "
                    + "left out")
        }
        // What fits in the foreground's advertising packet (and scan response) goes on the air;
        // service UUIDs that do not go to the overflow area, a long name is shortened.
        let advertisement = ForegroundAdvertisement.fitted(
            AdvertisementData(
                localName: name as? String, serviceUUIDs: (services as? [CBMUUID])?.map(\.bluetoothUUID) ?? []))
        let stops = lock.withLock { advertisingStops }
        lane.command { [self] peripheral in
            do {
                try peripheral.startAdvertising(advertisement)
                lane.deliver { [self] in
                    // In the order of the app's callbacks, unless the app stopped since.
                    lock.withLock { if advertisingStops == stops { advertising.isAdvertising = true } }
                    guard let (manager, delegate) = managerAndDelegate else { return }
                    delegate.peripheralManagerDidStartAdvertising(manager, error: nil)
                }
            } catch {
                let failure = CBMError.bridging(error)
                tell { manager, delegate in delegate.peripheralManagerDidStartAdvertising(manager, error: failure) }
            }
        }
    }

    func stopAdvertising() {
        guard poweredOn("stopAdvertising") else { return }
        lock.withLock {
            advertising.isAdvertising = false
            advertisingStops &+= 1
        }
        lane.command { $0.stopAdvertising() }
    }

    func updateValue(
        _ value: Data, for characteristic: CBMMutableCharacteristic, onSubscribedCentrals centrals: [CBMCentral]?
    ) -> Bool {
        let decision = lock.withLock { () -> (local: LocalCharacteristic, targets: Int, heard: Int)? in
            guard lockedPoweredOn("updateValue") else { return nil }
            guard let handle = characteristics.first(where: { $0.value === characteristic })?.key,
                let local = published.values.lazy.flatMap(\.local.characteristics).first(where: { $0.handle == handle })
            else {
                // Nothing to send it from (never added, removed, or its add not applied yet).
                lockedMisuse(
                    "updateValue: characteristic \(characteristic.uuid) is not in a service this manager published; "
                        + "not sent")
                return nil
            }
            let targets = (subscribers[handle] ?? []).filter { subscriber in
                centrals?.contains { $0.identifier == subscriber.identifier } ?? true
            }
            // Refused only while the queue is full (as the simulation decides: see
            // `World.updateValue`), counting the updates on their way to it.
            if let capacity = peripheral.updateQueueCapacity, !targets.isEmpty,
                queuedUpdates + updatesInFlight >= capacity
            {
                return (local, -1, readiesHeard)
            }
            updatesInFlight += targets.count
            return (local, targets.count, readiesHeard)
        }
        guard let decision else { return false }
        guard decision.targets >= 0 else {
            let (local, heard) = (decision.local, decision.heard)
            lane.command { [self] peripheral in
                // A ready handed to the app's queue after the point it refused at (the queue
                // drained while the refusal was on its way) answers it: the app hears one ready,
                // as from CoreBluetooth, not one more for each refusal made before it.
                let answered = lock.withLock { () -> Bool in
                    if readiesTold > heard { return true }
                    readyOwed = true
                    return false
                }
                peripheral.noteUpdateRefused(value, for: local, answered: answered)
            }
            return false
        }
        let update = AcceptedUpdate(
            value: value, local: decision.local, centrals: centrals?.map(\.identifier), inFlight: decision.targets)
        lane.command { [self] peripheral in _ = send(update, peripheral) }
        return true
    }

    /// Tells the app there is room in the update queue, if it is owed that (on the bridge's
    /// executor: see ``readyOwed``).
    private func tellReady() {
        guard
            lock.withLock({ () -> Bool in
                guard readyOwed else { return false }
                readyOwed = false
                readiesTold += 1
                return true
            })
        else { return }
        lane.deliver { [self] in
            lock.withLock { readiesHeard += 1 }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManagerIsReady(toUpdateSubscribers: manager)
        }
    }

    /// An update `updateValue` said was sent, on its way to the simulation.
    private struct AcceptedUpdate {
        let value: Data
        let local: LocalCharacteristic
        let centrals: [UUID]?
        /// What it counts in ``updatesInFlight`` until it reaches the simulation.
        let inFlight: Int
    }

    /// On the bridge's executor: hands the simulation the updates held for want of room, then
    /// `update`, in that order, and holds what its queue has no room for until it drains (the
    /// simulation then owes a ready event, which sends them first). Returns whether none is
    /// held. One a strict peripheral refuses (a value too long for a subscriber's link) or the
    /// simulation cannot send (a characteristic that cannot notify) is not sent and is noted, as
    /// the app's call cannot throw; one an injected fault refuses or fails is dropped, as its log
    /// entry says.
    private func send(_ update: AcceptedUpdate?, _ peripheral: isolated MockPeripheralManager) -> Bool {
        var pending = lock.withLock { () -> [AcceptedUpdate] in
            defer { heldUpdates.removeAll() }
            return heldUpdates
        }
        if let update { pending.append(update) }
        var reached = 0
        var left = 0
        for next in pending {
            guard !peripheral.updateQueueIsFull else { break }
            do {
                _ = try peripheral.sendUpdate(next.value, for: next.local, onSubscribedCentrals: next.centrals)
            } catch let error as APIMisuseError {
                misuse("updateValue: \(error); not sent")
            } catch {
                // An injected fault: the bridge's log has the update, with its error.
            }
            reached += next.inFlight
            left += 1
        }
        let held = Array(pending[left...])
        // (The queue is full: the simulation says when it drains.)
        if !held.isEmpty { peripheral.noteUpdateRefused() }
        lock.withLock { heldUpdates = held }
        let (queued, arrived) = (peripheral.queuedUpdates, reached)
        lane.deliver { [self] in
            lock.withLock {
                updatesInFlight -= arrived
                queuedUpdates = queued
            }
        }
        return held.isEmpty
    }

    func respond(to request: CBMATTRequest, withResult result: CBMATTError.Code) {
        let answer = request.request
        let value = request.value
        // A write batch is answered at its first request: an answer to another one answers
        // nothing (the batch still waits, unless its central went away), which the note says
        // rather than that the request was answered already.
        let laterPart = lock.withLock { () -> (first: UInt64, place: Int)? in
            guard !laterWriteParts.isEmpty else { return nil }
            if let part = laterWriteParts[answer.id] { return part }
            // The batch's first: its other requests are answered with it.
            laterWriteParts = laterWriteParts.filter { $0.value.first != answer.id }
            return nil
        }
        if let laterPart {
            lane.command { [self] peripheral in
                let part =
                    "request \(answer.id) is part \(laterPart.place + 1) of a write batch whose first is request "
                if peripheral.awaitsAnswer(to: laterPart.first) {
                    misuse(
                        "respond(to:withResult:): \(part)\(laterPart.first); CoreBluetooth takes a batch's answer at "
                            + "its first request, so this answers nothing")
                } else {
                    forgetLaterWriteParts(of: laterPart.first)
                    misuse(
                        "respond(to:withResult:): \(part)\(laterPart.first), which no longer waits for an answer: "
                            + "it was already answered, its central disconnected, or its service was removed")
                }
            }
            return
        }
        // ATT's codes are one byte: a code outside it is answered as CoreBluetooth's own
        // catch-all (unlikely error).
        let code = ATTError.Code(rawValue: UInt8(exactly: result.rawValue) ?? 0x0E)
        lane.command { [self] peripheral in
            do {
                try peripheral.respond(to: answer, withResult: code, value: value, call: "respond(to:withResult:)")
            } catch {
                // An answer to a request no longer pending (answered already, or its central
                // went away) has nowhere to go: ignored, and noted, as the app has a bug there
                // (CoreBluetooth asks for exactly one answer per request).
                misuse("respond(to:withResult:): \(error)")
            }
            // Answered, or nothing to answer any more: either way nothing waits for it.
            settleAnswer(to: answer.id)
        }
    }

    /// Notes that the app owes an answer to the request `id` (handed to its delegate now): a
    /// run does not move virtual time until it comes, for up to the run's stall patience, so an
    /// app that answers from another queue (after fetching the value, say) is answered at the
    /// request's instant on every run, as a device gives it ATT's 30 s.
    private func oweAnswer(to id: UInt64) {
        lane.bridge.outside.oweAnswer(peripheral: peripheral.identifier, request: id)
    }

    /// Forgets the later requests of the write batch whose first is `first`.
    private func forgetLaterWriteParts(of first: UInt64) {
        lock.withLock { laterWriteParts = laterWriteParts.filter { $0.value.first != first } }
    }

    /// The app answered the request `id`, or will not (see ``oweAnswer(to:)``).
    private func settleAnswer(to id: UInt64) {
        lane.bridge.outside.settleAnswer(peripheral: peripheral.identifier, request: id)
    }

    func publishL2CAPChannel(withEncryption encryptionRequired: Bool) {
        guard poweredOn("publishL2CAPChannel") else { return }
        lane.command { [self] peripheral in
            do {
                let psm = try peripheral.publishL2CAPChannel(requiresEncryption: encryptionRequired)
                tell { manager, delegate in delegate.peripheralManager(manager, didPublishL2CAPChannel: psm, error: nil)
                }
            } catch {
                let failure = CBMError.bridging(error)
                tell { manager, delegate in
                    delegate.peripheralManager(manager, didPublishL2CAPChannel: 0, error: failure)
                }
            }
        }
    }

    func unpublishL2CAPChannel(_ psm: UInt16) {
        guard poweredOn("unpublishL2CAPChannel") else { return }
        lane.command { [self] peripheral in
            var failure: (any Error)?
            do { try peripheral.unpublishL2CAPChannel(psm) } catch { failure = CBMError.bridging(error) }
            let reported = failure
            tell { manager, delegate in
                delegate.peripheralManager(manager, didUnpublishL2CAPChannel: psm, error: reported)
            }
        }
    }

    /// The objects for the services the system kept published for a restored manager, as the
    /// app published them (`CBPeripheralManagerRestoredStateServicesKey`): each service and its
    /// characteristics, in the order of `locals`, with a static characteristic's value and the
    /// descriptors (`described`, by value handle), and the services each includes.
    private static func restoredServices(
        _ locals: [LocalService], _ described: [UInt16: GATTCharacteristic]
    ) -> [(CBMMutableService, [CBMMutableCharacteristic])] {
        let restored = locals.map { local in
            let service = CBMMutableService(type: CBMUUID(bluetoothUUID: local.uuid), primary: local.isPrimary)
            let characteristics = local.characteristics.map { characteristic in
                let kept = described[characteristic.handle]
                let object = CBMMutableCharacteristic(
                    type: CBMUUID(bluetoothUUID: characteristic.uuid),
                    properties: CBMCharacteristicProperties(rawValue: characteristic.properties.rawValue),
                    value: kept?.value, permissions: CBMAttributePermissions(characteristic.permissions))
                if let descriptors = kept?.descriptors, !descriptors.isEmpty {
                    object.descriptors = descriptors.map { descriptor in
                        CBMMutableDescriptor(
                            type: CBMUUID(bluetoothUUID: descriptor.uuid),
                            value: CBMDescriptor.typedValue(descriptor.value, uuid: descriptor.uuid))
                    }
                }
                return object
            }
            service.characteristics = characteristics
            for characteristic in characteristics {
                characteristic.lock.withLock { characteristic.setService(service) }
            }
            return (service, characteristics)
        }
        let byHandle = Dictionary(uniqueKeysWithValues: zip(locals.map(\.handle), restored.map(\.0)))
        for (local, (service, _)) in zip(locals, restored) where !local.includedServiceHandles.isEmpty {
            service.includedServices = local.includedServiceHandles.compactMap { byHandle[$0] }
        }
        return restored
    }

    // MARK: Events

    /// The object for a central (the same one each time). Its update length changes in the order
    /// of the app's callbacks (delivered on its queue when the bridge reports another), so a
    /// callback still about the central's previous link reads that link's figure.
    private func centralObject(_ remote: RemoteCentral) -> CBMCentral {
        let length = remote.maximumUpdateValueLength
        let (object, changed) = lock.withLock { () -> (CBMCentral, Bool) in
            if let (existing, reported) = centrals[remote.identifier] {
                centrals[remote.identifier]!.reportedLength = length
                return (existing, reported != length)
            }
            let created = CBMCentral(remote)
            centrals[remote.identifier] = (created, length)
            return (created, false)
        }
        if changed { lane.deliver { object.update(remote) } }
        return object
    }

    /// Handles an event of the manager (on the bridge's executor, in the simulation's order).
    private func handle(_ event: PeripheralEvent) {
        switch event {
        case .stateChanged(let state):
            // Once powered on again after a state below powered off, the services published
            // before are gone (the app adds them again, often with the same characteristic
            // objects), and so are their subscribers. Powered off, the database stays (its
            // subscribers went with their links).
            let cleared = lock.withLock { () -> [CBMMutableCharacteristic] in
                guard state == .poweredOn else {
                    if state != .poweredOff { databaseCleared = true }
                    return []
                }
                guard databaseCleared else { return [] }
                databaseCleared = false
                return forgetAll()
            }
            lane.deliver { [self] in
                Self.unsubscribeAll(cleared)
                lock.withLock {
                    mirroredState = CBMManagerState(state)
                    advertising.stateChanged(to: state)
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.peripheralManagerDidUpdateState(manager)
            }
        case .readRequest(let request):
            let central = centralObject(request.central)
            guard let characteristic = lock.withLock({ characteristics[request.characteristic.handle] }) else { return }
            let object = CBMATTRequest(request, central: central, characteristic: characteristic)
            oweAnswer(to: request.id)
            lane.deliver { [self] in
                guard let (manager, delegate) = managerAndDelegate else { return settleAnswer(to: request.id) }
                delegate.peripheralManager(manager, didReceiveRead: object)
            }
        case .writeRequests(let requests):
            let objects = requests.compactMap { request -> CBMATTRequest? in
                guard let characteristic = lock.withLock({ characteristics[request.characteristic.handle] }) else {
                    return nil
                }
                return CBMATTRequest(request, central: centralObject(request.central), characteristic: characteristic)
            }
            guard !objects.isEmpty, let first = requests.first?.id else { return }
            // One answer, to the first request (as CoreBluetooth asks).
            oweAnswer(to: first)
            // Batches whose central went away before the app answered are forgotten here (the
            // app is never told of them again), so the table holds only batches that still wait.
            let waiting = lock.withLock { Set(laterWriteParts.values.map(\.first)) }
            let gone =
                waiting.isEmpty
                ? []
                : peripheral.assumeIsolated { peripheral in
                    waiting.filter { !peripheral.awaitsAnswer(to: $0) }
                }
            for batch in gone { forgetLaterWriteParts(of: batch) }
            if requests.count > 1 {
                lock.withLock {
                    for (place, request) in requests.enumerated().dropFirst() {
                        laterWriteParts[request.id] = (first, place)
                    }
                }
            }
            lane.deliver { [self] in
                guard let (manager, delegate) = managerAndDelegate else { return settleAnswer(to: first) }
                delegate.peripheralManager(manager, didReceiveWrite: objects)
            }
        case .subscribed(let remote, let local):
            let central = centralObject(remote)
            guard let characteristic = lock.withLock({ characteristics[local.handle] }) else { return }
            // The subscriber tables change in the order of the app's callbacks, so the answer of
            // an `updateValue` in a callback does not depend on how far the bridge has gone.
            lane.deliver { [self] in
                // (Once: a central that subscribed while the app was terminated is among the
                // subscribers its restored state listed.)
                lock.withLock {
                    // (Unless the app removed the service meanwhile.)
                    if characteristics[local.handle] === characteristic,
                        subscribers[local.handle]?.contains(where: { $0 === central }) != true
                    {
                        subscribers[local.handle, default: []].append(central)
                    }
                }
                characteristic.lock.withLock {
                    if !characteristic.subscribers.contains(where: { $0 === central }) {
                        characteristic.subscribers.append(central)
                    }
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.peripheralManager(manager, central: central, didSubscribeTo: characteristic)
            }
        case .unsubscribed(let remote, let local):
            let central = centralObject(remote)
            guard let characteristic = lock.withLock({ characteristics[local.handle] }) else { return }
            lane.deliver { [self] in
                lock.withLock { subscribers[local.handle]?.removeAll { $0 === central } }
                characteristic.lock.withLock { characteristic.subscribers.removeAll { $0 === central } }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.peripheralManager(manager, central: central, didUnsubscribeFrom: characteristic)
            }
        case .readyToUpdateSubscribers:
            guard !lock.withLock({ heldUpdates.isEmpty }) else { return tellReady() }
            // The updates the app was told were sent go first; the app hears there is room once
            // none is held.
            lane.command { [self] peripheral in
                guard send(nil, peripheral) else { return }
                // The held updates may have filled the queue again: the app hears it may send
                // once there is room for what it sends next.
                guard !peripheral.updateQueueIsFull else { return peripheral.noteUpdateRefused() }
                tellReady()
            }
        case .willRestoreState(let restored):
            // The services the system kept stay published: the app gets them back as objects
            // (with the centrals subscribed), and requests for them reach its delegate with those
            // objects, as CoreBluetooth restores them.
            let services = Self.restoredServices(
                restored.services, peripheral.assumeIsolated { $0.restoredCharacteristics() })
            let subscribed = peripheral.assumeIsolated { $0.restoredSubscribers() }.mapValues { $0.map(centralObject) }
            // Each characteristic object with what it stands for (fresh objects: nobody else sees
            // them until the lock below publishes them).
            let pairs = Array(zip(services.flatMap(\.1), restored.services.flatMap(\.characteristics)))
            for (object, local) in pairs {
                guard let centrals = subscribed[local.handle] else { continue }
                object.lock.withLock { object.subscribers = centrals }
            }
            lock.withLock {
                for ((service, _), local) in zip(services, restored.services) {
                    published[ObjectIdentifier(service)] = (service, local)
                }
                for (object, local) in pairs {
                    characteristics[local.handle] = object
                    subscribers[local.handle] = subscribed[local.handle]
                }
                advertising.isAdvertising = restored.advertisement != nil
            }
            var dictionary: [String: Any] = [CBMPeripheralManagerRestoredStateServicesKey: services.map(\.0)]
            if let advertisement = restored.advertisement {
                // What the app advertised (its local name and service UUIDs).
                dictionary[CBMPeripheralManagerRestoredStateAdvertisementDataKey] = advertisement.dictionary(
                    keys: .platform, uuid: { CBMUUID(bluetoothUUID: $0) })
            }
            let restoredState = UncheckedDictionary(dictionary)
            tell { manager, delegate in delegate.peripheralManager(manager, willRestoreState: restoredState.value) }
        case .l2capChannelOpened(let channel):
            // The central the app knows from its requests and subscriptions, with its link's figure.
            let length = peripheral.assumeIsolated { $0.maximumUpdateValueLength(for: channel.peer) } ?? 20
            let peer = centralObject(RemoteCentral(identifier: channel.peer, maximumUpdateValueLength: length))
            let lane = lane
            let streams = lane.bridge.assumeIsolated { bridge in
                CBML2CAPChannel.streams(over: channel, atCentral: false, on: bridge, appQueue: lane.queue) { body in
                    lane.command { _ in lane.bridge.assumeIsolated(body) }
                }
            }
            let link = streams.link
            let opened = CBML2CAPChannel(
                psm: channel.psm, peer: peer, channel: channel, inputStream: streams.input,
                outputStream: streams.output, released: { link.channelReleased() })
            tell { manager, delegate in delegate.peripheralManager(manager, didOpen: opened, error: nil) }
        }
    }
}
