/// Stable numbers for objects that have no handle of their own.
///
/// CoreBluetooth hides ATT handles, but the role protocols identify services,
/// characteristics and descriptors by handle-bearing values (`RemoteCharacteristic.handle`,
/// `LocalCharacteristic.handle`). The adapter numbers each `CBService`, `CBCharacteristic`
/// and `CBDescriptor` object the first time it sees it, in discovery (or publication) order,
/// from 1 upwards, and maps both ways: object → number by object identity, number → object.
///
/// One numbering is kept per peripheral (central side) or per manager (peripheral side), so
/// numbers are unique there. Numbers are never reused: after a service is invalidated or
/// rediscovered, CoreBluetooth creates new objects, which get new numbers, and a value
/// holding an old number is reported as stale instead of silently reaching another attribute.
/// When all 65,535 numbers are used, ``number(for:)`` returns `nil`.
///
/// The numbering holds strong references to the objects it numbered until ``forget(_:)``.
/// The type is generic and does not touch CoreBluetooth; it is unit-tested on every platform.
struct AttributeNumbering<Object: AnyObject> {
    private var numbers: [ObjectIdentifier: UInt16] = [:]
    private var objects: [UInt16: Object] = [:]
    private var next: UInt32 = 1

    /// Creates an empty numbering, starting at 1.
    init() {}

    /// The object's number, assigning the next free one on first sight; `nil` when the 16-bit
    /// range is used up.
    mutating func number(for object: Object) -> UInt16? {
        if let number = numbers[ObjectIdentifier(object)] { return number }
        guard next <= UInt32(UInt16.max) else { return nil }
        let number = UInt16(next)
        next += 1
        numbers[ObjectIdentifier(object)] = number
        objects[number] = object
        return number
    }

    /// The number already assigned to the object, without assigning one.
    func existingNumber(for object: Object) -> UInt16? {
        numbers[ObjectIdentifier(object)]
    }

    /// The object with a number, if it is still known.
    func object(numbered number: UInt16) -> Object? {
        objects[number]
    }

    /// Forgets objects (e.g. an invalidated service and its characteristics); their numbers
    /// are not reused.
    mutating func forget(_ forgotten: [Object]) {
        for object in forgotten {
            if let number = numbers.removeValue(forKey: ObjectIdentifier(object)) { objects[number] = nil }
        }
    }

    /// Forgets every object; numbering continues where it was, so old numbers stay stale.
    mutating func forgetAll() {
        numbers = [:]
        objects = [:]
    }

    /// The number of objects currently known.
    var count: Int { objects.count }

    /// The number the next new object would get, or `nil` when none is left.
    var nextNumber: UInt16? { next <= UInt32(UInt16.max) ? UInt16(next) : nil }
}
