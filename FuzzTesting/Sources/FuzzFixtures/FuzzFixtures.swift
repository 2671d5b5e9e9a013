import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// libFuzzer entry point: reads the input as a peripheral profile and as a scenario.
///
/// Beyond "nothing traps, hangs or leaks": parsing is deterministic (twice gives equal
/// values or equal errors), an error's position lies inside the input, and a loaded
/// profile's characteristic ids all resolve. Scenario paths such as
/// `"../peripherals/heart-rate.json"` resolve from `Fixtures/scenarios` (the script runs
/// from the repository root), so the seeds load the bundled profiles. Broken properties
/// stop the run with `fatalError`, which libFuzzer reports as a crash with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFixtures(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let lines = lineCount(data)
    checkDeterministic(data, lines: lines) { () throws(FixtureError) in
        try PeripheralProfile(json: data, file: "fuzz.json")
    }
    let profile = try? PeripheralProfile(json: data, file: "fuzz.json")
    if let profile { checkProfile(profile) }
    checkDeterministic(data, lines: lines) { () throws(FixtureError) in
        try Scenario(json: data, file: "fuzz.json", baseDirectory: scenarioDirectory)
    }
    if let scenario = try? Scenario(json: data, file: "fuzz.json", baseDirectory: scenarioDirectory) {
        checkProfile(scenario.peripheral)
    }
    return 0
}

/// Lines as the fixture parser counts them: CR, LF and CRLF each end one.
func lineCount(_ data: Data) -> Int {
    var lines = 1
    var previous: UInt8 = 0
    for byte in data {
        if byte == 0x0D || (byte == 0x0A && previous != 0x0D) { lines += 1 }
        previous = byte
    }
    return lines
}

/// Where the bundled scenarios live, from the repository root.
let scenarioDirectory = URL(fileURLWithPath: "Fixtures/scenarios", isDirectory: true)

/// Loads twice and requires the same outcome; an error must point inside the input.
func checkDeterministic<T: Equatable>(_ data: Data, lines: Int, _ load: () throws(FixtureError) -> T) {
    let first = Result { () throws(FixtureError) in try load() }
    let second = Result { () throws(FixtureError) in try load() }
    guard first == second else { fatalError("two loads of the same bytes differ: \(first) / \(second)") }
    guard case .failure(let error) = first else { return }
    guard !error.message.isEmpty, !error.fix.isEmpty, !error.description.isEmpty else {
        fatalError("error without a message or fix: \(error)")
    }
    if error.file == "fuzz.json", error.line < 0 || error.line > lines || error.column < 0 {
        fatalError("error at \(error.line):\(error.column) lies outside the \(lines)-line input: \(error)")
    }
}

/// A loaded profile must be self-consistent.
func checkProfile(_ profile: PeripheralProfile) {
    for id in profile.characteristicIDs where profile.characteristic(id: id) == nil {
        fatalError("characteristic id \(id) does not resolve")
    }
    for service in profile.services {
        _ = service.gattService
        for characteristic in service.characteristics
        where (characteristic.value?.count ?? 0) > PeripheralProfile.maximumAttributeLength {
            fatalError("characteristic \(characteristic.uuid) loaded a value over 512 bytes")
        }
    }
    if let mtu = profile.preferredMTU, !PeripheralProfile.preferredMTURange.contains(mtu) {
        fatalError("preferred MTU \(mtu) out of range was accepted")
    }
    _ = profile.configuration()
}
