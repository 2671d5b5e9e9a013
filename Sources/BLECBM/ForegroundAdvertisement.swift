import BLECore

/// What a CoreBluetooth peripheral manager in the foreground advertises of the data an app asks
/// for: CoreBluetooth advertises "on a best-effort basis" in a legacy advertising packet, whose
/// 31 bytes, less the 3 of the flags, leave 28 for the app's data, each field with its 2-byte
/// header (Core Specification, Vol 3, Part C, 11; `CBPeripheralManager.startAdvertising(_:)`):
///
/// - The service UUIDs come first, in one list per width (16-bit, 32-bit, 128-bit), in the order
///   given. Those that do not fit go to the overflow area, where only a scan that names them
///   finds them (as the background does with all of them).
/// - The local name takes the space left in the packet, or the scan response's 10 bytes when
///   that is more (the scan response carries only the name): the whole name when it fits with
///   its header, else its longest beginning that does, in whole characters (a shortened name,
///   as Bluetooth allows). An app advertising a 128-bit service and a long name is seen with
///   the name's first 8 bytes, as on an iPhone.
enum ForegroundAdvertisement {
    /// The bytes of the advertising packet the app's data may use.
    static let packetSpace = 28
    /// The bytes of the scan response the local name may use.
    static let scanResponseSpace = 10
    /// The bytes each field's header takes (its length and type).
    static let fieldHeader = 2

    /// `advertisement` as centrals hear it: what fits, and the service UUIDs that do not in its
    /// overflow area.
    static func fitted(_ advertisement: AdvertisementData) -> AdvertisementData {
        var fitted = advertisement
        var space = packetSpace
        var kept: [BluetoothUUID] = []
        var overflow: [BluetoothUUID] = []
        for width in BluetoothUUID.Width.allCases {
            let size = width.rawValue / 8
            let listed = advertisement.serviceUUIDs.filter { $0.width == width }
            guard !listed.isEmpty else { continue }
            // The list's header, then as many UUIDs as fit after it.
            let fitting = space > fieldHeader ? min(listed.count, (space - fieldHeader) / size) : 0
            if fitting > 0 { space -= fieldHeader + fitting * size }
            kept += listed.prefix(fitting)
            overflow += listed.dropFirst(fitting)
        }
        // In the order the app gave them.
        fitted.serviceUUIDs = advertisement.serviceUUIDs.filter { kept.contains($0) }
        fitted.overflowServiceUUIDs += advertisement.serviceUUIDs.filter {
            overflow.contains($0) && !fitted.overflowServiceUUIDs.contains($0)
        }
        if let name = advertisement.localName {
            fitted.localName = shortened(name, toBytes: max(space, scanResponseSpace) - fieldHeader)
        }
        return fitted
    }

    /// The longest beginning of `name`, in whole characters, of at most `limit` bytes of UTF-8;
    /// `nil` when not even one character fits.
    static func shortened(_ name: String, toBytes limit: Int) -> String? {
        if name.utf8.count <= limit { return name }
        var shortened = ""
        var used = 0
        for character in name {
            let size = character.utf8.count
            guard used + size <= limit else { break }
            shortened.append(character)
            used += size
        }
        return shortened.isEmpty ? nil : shortened
    }
}
