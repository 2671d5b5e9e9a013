import BLECore
import BLEMockKit
import Foundation

/// A service of a simulated peripheral (CoreBluetoothMock's `CBMServiceMock`).
open class CBMServiceMock: CBMService, @unchecked Sendable {
    private let declaredCharacteristics: [CBMCharacteristicMock]
    private let declaredIncludedServices: [CBMServiceMock]

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

    open override var characteristics: [CBMCharacteristic]? { declaredCharacteristics }

    open override var includedServices: [CBMService]? { declaredIncludedServices }

    /// The included service mocks, as declared.
    var includedServiceMocks: [CBMServiceMock] { declaredIncludedServices }

    /// The characteristic mocks, as declared.
    var characteristicMocks: [CBMCharacteristicMock] { declaredCharacteristics }

    /// The service as the kit's value type: characteristics readable or writable as their
    /// properties say; their values come from the spec's delegate.
    var gattService: GATTService {
        GATTService(
            uuid: uuid.bluetoothUUID, isPrimary: isPrimary,
            includedServices: declaredIncludedServices.map(\.uuid.bluetoothUUID),
            characteristics: declaredCharacteristics.map(\.gattCharacteristic))
    }
}

/// A characteristic of a simulated peripheral (CoreBluetoothMock's `CBMCharacteristicMock`).
open class CBMCharacteristicMock: CBMCharacteristic, @unchecked Sendable {
    private let declaredDescriptors: [CBMDescriptorMock]

    /// Creates a characteristic with its descriptors (a ``CBMClientCharacteristicConfigurationDescriptorMock``
    /// is optional: the simulated stack adds the CCCD to characteristics that notify or indicate).
    public init(type uuid: CBMUUID, properties: CBMCharacteristicProperties, descriptors: CBMDescriptorMock...) {
        declaredDescriptors = descriptors
        super.init(local: uuid, properties: properties, value: nil)
        for descriptor in descriptors {
            descriptor.lock.withLock { descriptor.setCharacteristic(self) }
        }
    }

    open override var descriptors: [CBMDescriptor]? { declaredDescriptors }

    /// The descriptor mocks, as declared.
    var declaredDescriptorMocks: [CBMDescriptorMock] { declaredDescriptors }

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
        let descriptors = declaredDescriptors.filter { $0.uuid != CBMUUID(string: "2902") }.map {
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
