import BLEMockKit
import FuzzFixtureChecks

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
    let profile = checkDeterministic(data) { () throws(FixtureError) in
        try PeripheralProfile(json: data, file: "fuzz.json")
    }
    if let profile { checkProfile(profile) }
    let scenario = checkDeterministic(data) { () throws(FixtureError) in
        try Scenario(json: data, file: "fuzz.json", baseDirectory: scenarioDirectory)
    }
    if let scenario { checkProfile(scenario.peripheral) }
    return 0
}

/// Where the bundled scenarios live, from the repository root.
let scenarioDirectory = URL(fileURLWithPath: "Fixtures/scenarios", isDirectory: true)

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
