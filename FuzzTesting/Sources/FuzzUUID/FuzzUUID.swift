import BLECore

/// libFuzzer entry point: parses the input as a Bluetooth UUID, as text and as bytes.
///
/// Checks, beyond "nothing traps": a parsed UUID prints as a string that parses back to
/// the same UUID (short and full forms), its bytes parse back to it, and every parse error
/// describes itself. Any broken property stops the run with `fatalError`, which libFuzzer
/// reports as a crash and saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUUID(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    checkText(String(decoding: bytes, as: UTF8.self))
    checkBytes(bytes)
    return 0
}

/// Parses `text`; a success must round-trip through both string forms.
func checkText(_ text: String) {
    let uuid: BluetoothUUID
    do {
        uuid = try BluetoothUUID(string: text)
    } catch {
        guard error.input == text, !error.description.isEmpty else {
            fatalError("parse error for \(text.debugDescription) does not describe the input: \(error)")
        }
        return
    }
    for form in [uuid.uuidString, uuid.fullString] {
        guard (try? BluetoothUUID(string: form)) == uuid else {
            fatalError("\(text.debugDescription) parsed as \(uuid.fullString), whose form \(form) does not parse back")
        }
    }
    let digits: [BluetoothUUID.Width: Int] = [.bits16: 4, .bits32: 8, .bits128: 36]
    guard uuid.uuidString.count == digits[uuid.width] else {
        fatalError("\(uuid.fullString) prints as \(uuid.uuidString), which does not match its width \(uuid.width)")
    }
    guard BluetoothUUID(uuid.uuid) == uuid else {
        fatalError("\(uuid.fullString) does not survive a round trip through Foundation's UUID")
    }
    checkBytes(uuid.bytes, expecting: uuid)
}

/// Parses raw big-endian bytes; a success must give the same bytes back.
func checkBytes(_ bytes: [UInt8], expecting expected: BluetoothUUID? = nil) {
    let uuid: BluetoothUUID
    do {
        uuid = try BluetoothUUID(bytes: bytes)
    } catch {
        guard expected == nil, !error.description.isEmpty else {
            fatalError("the bytes \(bytes) of \(expected?.fullString ?? "?") do not parse back: \(error)")
        }
        return
    }
    if let expected, uuid != expected {
        fatalError("the bytes \(bytes) of \(expected.fullString) parse as \(uuid.fullString)")
    }
    guard (try? BluetoothUUID(bytes: uuid.bytes)) == uuid else {
        fatalError("\(uuid.fullString) does not survive a round trip through its bytes \(uuid.bytes)")
    }
}
