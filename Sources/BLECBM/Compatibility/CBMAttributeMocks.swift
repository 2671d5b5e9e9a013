import BLECore
import BLEMockKit
import Foundation

/// A service of a simulated peripheral (CoreBluetoothMock's `CBMServiceMock`).
open class CBMServiceMock: CBMService, @unchecked Sendable {
    // (Read and written with `lock` held.)
    private var declaredCharacteristics: [CBMCharacteristicMock]
    private var declaredIncludedServices: [CBMServiceMock]

    /// Creates a service with its characteristics.
    public convenience init(
        type uuid: CBMUUID, primary isPrimary: Bool, includedServices: CBMServiceMock...,
        characteristics: CBMCharacteristicMock...
    ) {
        self.init(type: uuid, primary: isPrimary, includedServices: includedServices, characteristics: characteristics)
    }

    /// Creates a service with its characteristics.
    public init(
        type uuid: CBMUUID, primary isPrimary: Bool, includedServices: [CBMServiceMock]? = nil,
        characteristics: [CBMCharacteristicMock]? = nil
    ) {
        declaredCharacteristics = characteristics ?? []
        declaredIncludedServices = includedServices ?? []
        super.init(local: uuid, primary: isPrimary)
        for characteristic in declaredCharacteristics {
            characteristic.lock.withLock { characteristic.setService(self) }
        }
    }

    /// The service's characteristics. Settable, as in CoreBluetoothMock up to 0.12 (tests
    /// written for it declare a service, then set its characteristics): set them before the
    /// spec is simulated, since a simulated spec publishes the ones it had then. Only
    /// ``CBMCharacteristicMock``s can be set; other characteristics are left out, with a warning.
    open override var characteristics: [CBMCharacteristic]? {
        get { lock.withLock { declaredCharacteristics } }
        set {
            let mocks = Self.mocks(newValue, "characteristics", as: CBMCharacteristicMock.self)
            for characteristic in mocks {
                characteristic.lock.withLock { characteristic.setService(self) }
            }
            lock.withLock { declaredCharacteristics = mocks }
        }
    }

    /// The service's included services. Settable, as in CoreBluetoothMock up to 0.12, with the
    /// same rules as ``characteristics``: only ``CBMServiceMock``s, before the spec is simulated.
    open override var includedServices: [CBMService]? {
        get { lock.withLock { declaredIncludedServices } }
        set {
            lock.withLock {
                declaredIncludedServices = Self.mocks(newValue, "includedServices", as: CBMServiceMock.self)
            }
        }
    }

    /// The included service mocks, as declared.
    var includedServiceMocks: [CBMServiceMock] { lock.withLock { declaredIncludedServices } }

    /// The characteristic mocks, as declared.
    var characteristicMocks: [CBMCharacteristicMock] { lock.withLock { declaredCharacteristics } }

    /// The mocks among `attributes` (all of them, in order), warning of the others.
    static func mocks<Attribute: AnyObject, Mock>(_ attributes: [Attribute]?, _ property: String, as _: Mock.Type)
        -> [Mock]
    {
        let mocks = (attributes ?? []).compactMap { $0 as? Mock }
        if mocks.count < attributes?.count ?? 0 {
            Warning.emit(
                "\(property): only \(Mock.self) objects can be set; "
                    + "\((attributes?.count ?? 0) - mocks.count) other object(s) left out.")
        }
        return mocks
    }

    /// The service as the kit's value type: characteristics readable or writable as their
    /// properties say; their values come from the spec's delegate.
    var gattService: GATTService {
        GATTService(
            uuid: uuid.bluetoothUUID, isPrimary: isPrimary,
            includedServices: includedServiceMocks.map(\.uuid.bluetoothUUID),
            characteristics: characteristicMocks.map(\.gattCharacteristic))
    }
}

/// A characteristic of a simulated peripheral (CoreBluetoothMock's `CBMCharacteristicMock`).
open class CBMCharacteristicMock: CBMCharacteristic, @unchecked Sendable {
    // (Read and written with `lock` held.)
    private var declaredDescriptors: [CBMDescriptorMock]

    /// Creates a characteristic with its descriptors (a ``CBMClientCharacteristicConfigurationDescriptorMock``
    /// is optional: the simulated stack adds the CCCD to characteristics that notify or indicate).
    public init(type uuid: CBMUUID, properties: CBMCharacteristicProperties, descriptors: CBMDescriptorMock...) {
        declaredDescriptors = descriptors
        super.init(local: uuid, properties: properties, value: nil)
        for descriptor in descriptors {
            descriptor.lock.withLock { descriptor.setCharacteristic(self) }
        }
    }

    /// The characteristic's descriptors. Settable, as in CoreBluetoothMock up to 0.12, with the
    /// rules of ``CBMServiceMock/characteristics``: only ``CBMDescriptorMock``s, before the spec
    /// is simulated.
    open override var descriptors: [CBMDescriptor]? {
        get { lock.withLock { declaredDescriptors } }
        set {
            let mocks = CBMServiceMock.mocks(newValue, "descriptors", as: CBMDescriptorMock.self)
            for descriptor in mocks {
                descriptor.lock.withLock { descriptor.setCharacteristic(self) }
            }
            lock.withLock { declaredDescriptors = mocks }
        }
    }

    /// The descriptor mocks, as declared.
    var declaredDescriptorMocks: [CBMDescriptorMock] { lock.withLock { declaredDescriptors } }

    /// The last value set with `simulateValueUpdate(_:for:)`.
    open override var value: Data? {
        get { lock.withLock { storedValue } }
        set { lock.withLock { storedValue = newValue } }
    }

    var gattCharacteristic: GATTCharacteristic {
        let properties = CharacteristicProperties(rawValue: self.properties.rawValue)
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.readable) }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse]) { permissions.insert(.writeable) }
        let descriptors = declaredDescriptorMocks.filter { $0.uuid != CBMUUID(string: "2902") }.map {
            GATTDescriptor(uuid: $0.uuid.bluetoothUUID, value: CBMMutableDescriptor.data(of: $0.value))
        }
        return GATTCharacteristic(
            uuid: uuid.bluetoothUUID, properties: properties, permissions: permissions, value: nil,
            descriptors: descriptors)
    }
}

/// A descriptor of a simulated peripheral (CoreBluetoothMock's `CBMDescriptorMock`).
open class CBMDescriptorMock: CBMDescriptor, @unchecked Sendable {
    /// Creates a descriptor.
    public init(type uuid: CBMUUID) {
        super.init(local: uuid, value: nil)
    }
}

/// The Client Characteristic Configuration descriptor (0x2902).
open class CBMClientCharacteristicConfigurationDescriptorMock: CBMDescriptorMock, @unchecked Sendable {
    /// Creates the descriptor.
    public init() {
        super.init(type: CBMUUID(string: "2902"))
    }
}

/// CoreBluetoothMock's short name for ``CBMClientCharacteristicConfigurationDescriptorMock``.
public typealias CBMCCCDescriptorMock = CBMClientCharacteristicConfigurationDescriptorMock
