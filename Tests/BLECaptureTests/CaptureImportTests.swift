import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// Imports the bundled captures, made by an independent stack (bumble) with
/// `Fixtures/captures/make-captures.py`, and checks that each yields the database, values and
/// outcomes the script defined.
@Suite("Importing the bundled captures", .timeLimit(.minutes(10)))
struct CaptureImportTests {
    typealias S = CaptureTestSupport

    static let names = [
        "discovery-reads", "long-values", "notifications", "notifications-peripheral-side", "att-errors",
        "two-peripherals",
    ]

    /// The steps of a scenario as `op char` (or `op`) strings, without `advance` steps.
    static func ops(_ scenario: Scenario) -> [String] {
        scenario.steps.compactMap { step in
            switch step.operation {
            case .advance, .advanceTo: nil
            case .read(let c), .subscribe(let c), .unsubscribe(let c), .notify(let c, _), .indicate(let c, _),
                .notifyBurst(let c, _):
                "\(step.operation.name) \(c)"
            case .subscribeToIndications(let c): "subscribe \(c) (indications)"
            case .write(let c, _, let withResponse): "write \(c)" + (withResponse ? "" : " (no response)")
            case .inject(let injection): "inject \(injection.target.rawValue)"
            case .disconnect(let side): "disconnect by \(side.rawValue)"
            default: step.operation.name
            }
        }
    }

    /// The trace times (from the connection) of the steps with op `name`.
    static func times(_ trace: ScenarioTrace, op name: String) -> [String] {
        trace.records.filter { $0.op == name }.map { FixtureDuration.string($0.time) }
    }

    @Test func discoveryAndReadsRebuildTheDatabaseTheScriptDefined() async throws {
        let imported = try S.load("discovery-reads")
        #expect(imported.peer.description == "C1:C1:C1:C1:C1:C1")
        #expect(imported.isLocalCentral)
        let profile = imported.profile
        #expect(profile.name == "Thermo-1")
        #expect(profile.advertisement?.localName == "Thermo-1")
        #expect(profile.advertisement?.serviceUUIDs == ["181A"])
        #expect(profile.advertisement?.manufacturerData == Data([0xFF, 0xFF, 0x01, 0x02]))
        #expect(profile.advertisement?.isConnectable == true)
        #expect(profile.preferredMTU == nil)
        #expect(profile.services.map(\.uuid) == ["FFF0", "181A", "A0B40001-926D-4D61-98DF-8C5C62EE53B3"])
        #expect(profile.services.map(\.isPrimary) == [false, true, true])
        #expect(profile.services.map(\.handle) == [14, 17, 25])
        #expect(profile.services.map(\.endHandle) == [16, 24, 29])
        #expect(profile.services[1].includedServices == ["FFF0"])
        let calibration = try #require(profile.characteristic(id: "h0010"))
        #expect(calibration.uuid == "FFF1" && calibration.value == Data([0x01, 0x02]))
        let temperature = try #require(profile.characteristic(id: "h0014"))
        #expect(temperature.uuid == "2A6E")
        #expect(temperature.properties == [.read, .notify])
        #expect(temperature.value == nil)
        #expect(temperature.initialValue == Data([0x0A, 0x09]))
        #expect((temperature.handle, temperature.valueHandle) == (19, 20))
        #expect(temperature.descriptors == [.userDescription("Temperature")])
        #expect(temperature.descriptorHandles == [21])
        #expect(profile.characteristic(id: "h0018")?.value == Data([0x11, 0x27]))
        let text = try #require(profile.characteristic(id: "h001B"))
        #expect(text.properties == [.read, .write])
        #expect(text.permissions == [.readable, .writeable])
        #expect(text.initialValue == Data("hello".utf8))
        #expect(profile.characteristic(id: "h001D")?.properties == [.writeWithoutResponse])
        #expect(
            Self.ops(imported.scenario) == [
                "scan", "connect", "discover", "read h0014", "read h0018", "read h001B", "write h001B",
                "write h001D (no response)", "read h001B", "disconnect by central",
            ])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(
            trace.records.filter { $0.op == "read" }.map(\.value) == [
                Data([0x0A, 0x09]), Data([0x11, 0x27]), Data("hello".utf8), Data("world".utf8),
            ])
        #expect(Self.times(trace, op: "read") == ["0.6s", "0.7s", "1s", "1.3s"])
        #expect(Self.times(trace, op: "disconnect") == ["1.50002s"])
        #expect(
            imported.warnings.map(\.kind) == [
                .notReplayed(
                    "a read of h0010 in secondary service FFF0 (which a scenario's discover step does not reach) is not replayed"
                ),
                .profileAdjusted(
                    "the GAP (1800) and GATT (1801) services are left out: the simulated stack provides them "
                        + "(the device name read from it became the profile's name)"),
                .notReplayed(
                    "1 operation(s) on the GAP and GATT services are not replayed (the simulated stack provides those services)"
                ),
            ])
        #expect(imported.warnings[0].packet == 112)
    }

    @Test func longReadsAndWritesAreWholeValues() async throws {
        let imported = try S.load("long-values")
        let log = try #require(imported.profile.characteristic(id: "h0010"))
        #expect(log.value == Data((0..<300).map { UInt8($0 % 256) }))
        let config = try #require(imported.profile.characteristic(id: "h0012"))
        #expect(config.initialValue == nil)
        #expect(imported.scenario.centralPreferredMTU == 23)
        let writes = imported.scenario.steps.compactMap { step -> Data? in
            if case .write(_, let value, true) = step.operation { return value }
            return nil
        }
        #expect(writes == [Data(0..<100)])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let reads = trace.records.filter { $0.op == "read" }
        #expect(reads.map { $0.value?.count } == [300, 100])
        #expect(reads.last?.value == Data(0..<100))
        #expect(trace.records.first { $0.op == "connect" }?.mtu == 23)
        #expect(imported.warnings.count == 1)
    }

    @Test func notificationsAndIndicationsKeepTheirPayloadsTimesAndTheMTU() async throws {
        let imported = try S.load("notifications")
        #expect(imported.profile.name == "Pulse")
        #expect(imported.profile.preferredMTU == 185)
        #expect(imported.scenario.centralPreferredMTU == 247)
        #expect(imported.profile.characteristic(id: "h0010")?.properties == [.notify])
        #expect(imported.profile.characteristic(id: "h0016")?.properties == [.indicate])
        #expect(
            Self.ops(imported.scenario) == [
                "scan", "connect", "discover", "subscribe h0010", "subscribe h0016", "notify h0010", "notify h0010",
                "notify h0010", "indicate h0016", "indicate h0016", "unsubscribe h0010", "disconnect by peripheral",
            ])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.first { $0.op == "connect" }?.mtu == 185)
        let received = trace.records.filter { $0.op == "notify" || $0.op == "indicate" }.map { $0.received ?? [] }
        #expect(
            received == [
                [Data([0x06, 0x48])], [Data([0x06, 0x4A])], [Data((0..<100).map { UInt8($0) })], [Data("alert".utf8)],
                [Data([0x02])],
            ])
        #expect(Self.times(trace, op: "notify") == ["1s", "1.25s", "1.5s"])
        #expect(Self.times(trace, op: "indicate") == ["2s", "2.5s"])
        #expect(imported.warnings.count == 1)
    }

    @Test func aCaptureFromThePeripheralsSideImportsTheSameConversation() async throws {
        let central = try S.load("notifications")
        let peripheral = try S.load("notifications-peripheral-side")
        #expect(!peripheral.isLocalCentral)
        #expect(peripheral.peer.description == "F0:F0:F0:F0:F0:F0")
        #expect(peripheral.profile.services == central.profile.services)
        #expect(peripheral.profile.preferredMTU == 185)
        #expect(peripheral.profile.advertisement == nil)
        #expect(Self.ops(peripheral.scenario) == Self.ops(central.scenario))
        let trace = await ScenarioRunner(peripheral.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        // The peripheral's host sends the 100-byte notification in four ACL packets of at most
        // 27 bytes, 10 µs apart: it is whole with the last one.
        #expect(Self.times(trace, op: "notify") == ["1s", "1.25s", "1.50003s"])
    }

    @Test func attErrorResponsesBecomeInjectedErrors() async throws {
        let imported = try S.load("att-errors")
        #expect(
            Self.ops(imported.scenario) == [
                "scan", "connect", "discover", "inject read", "read h0010", "inject write", "write h0014",
                "read h0012", "disconnect by central",
            ])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let failures = trace.records.filter { !$0.ok }
        #expect(failures.map(\.op) == ["read", "write"])
        #expect(failures.map { $0.error?.code } == [0x80, 0x03])
        #expect(trace.records.last { $0.op == "read" }?.value == Data([0x2A]))
    }

    @Test func theFirstConnectionIsFollowedAndTheOtherNamed() throws {
        let imported = try S.load("two-peripherals")
        #expect(imported.peer.description == "C1:C1:C1:C1:C1:C1")
        #expect(
            imported.warnings.first?.kind
                == .otherConnection(peer: BluetoothAddress(string: "C2:C2:C2:C2:C2:C2")!, handle: 2))
        #expect(imported.warnings.first?.message.contains("--peer C2:C2:C2:C2:C2:C2") == true)
    }

    @Test func peerChoosesTheConnectionToFollow() async throws {
        let imported = try S.load("two-peripherals", peer: "c2:c2:c2:c2:c2:c2")
        #expect(imported.peer.description == "C2:C2:C2:C2:C2:C2")
        #expect(imported.connectionHandle == 2)
        #expect(imported.profile.name == "Battery-2")
        #expect(imported.profile.services.map(\.uuid) == ["180F"])
        #expect(imported.profile.characteristic(id: "h0010")?.value == Data([0x5A]))
        #expect(
            imported.warnings.contains {
                $0.kind == .otherConnection(peer: BluetoothAddress(string: "C1:C1:C1:C1:C1:C1")!, handle: 1)
            })
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test(arguments: names)
    func eachImportMatchesItsCommittedFilesByteForByte(_ name: String) throws {
        let imported = try S.load(name)
        let folder = S.capturesFolder.appendingPathComponent("imported")
        let profile = try String(contentsOf: folder.appendingPathComponent(imported.profileFileName), encoding: .utf8)
        let scenario = try String(contentsOf: folder.appendingPathComponent(imported.scenarioFileName), encoding: .utf8)
        #expect(imported.profileJSON == profile)
        #expect(imported.scenarioJSON() == scenario)
    }

    @Test(arguments: names)
    func eachCommittedScenarioLoadsWithItsProfileAndPassesWhenRun(_ name: String) async throws {
        let folder = S.capturesFolder.appendingPathComponent("imported")
        let scenario = try Scenario.load(contentsOf: folder.appendingPathComponent("\(name).scenario.json"))
        #expect(scenario.peripheralPath == "\(name).peripheral.json")
        #expect(scenario.peripheral == (try S.load(name)).profile)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func writingPutsBothFilesInTheDirectory() throws {
        let imported = try S.load("att-errors")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-import-\(ProcessInfo.processInfo.processIdentifier)-write")
            .appendingPathComponent("nested")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let written = try imported.write(to: directory)
        #expect(written.profile.lastPathComponent == "att-errors.peripheral.json")
        #expect(try String(contentsOf: written.scenario, encoding: .utf8) == imported.scenarioJSON())
        #expect(imported.scenarioJSON(peripheralPath: "../x.json").contains(#""peripheral": "../x.json""#))
    }

    @Test func writingWhereAFileStandsFailsWithUnwritableOutput() throws {
        let imported = try S.load("att-errors")
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-import-\(ProcessInfo.processInfo.processIdentifier)-file")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: CaptureImportError.unwritableOutput(file.path)) { try imported.write(to: file) }
    }

    @Test(arguments: [
        ("../escaped", "_escaped"), ("", "import"), (".hidden", "hidden"), ("a\\b/c", "a_b_c"), ("..", "import"),
        ("plain name", "plain name"),
    ])
    func namesThatWouldLeaveTheDirectoryOrHideTheFilesAreWrittenSafely(name: String, stem: String) throws {
        let imported = try CaptureImporter().importCapture(bytes: try S.bytes("att-errors"), name: name)
        #expect(imported.profileFileName == "\(stem).peripheral.json")
        #expect(imported.scenarioFileName == "\(stem).scenario.json")
        #expect(imported.scenario.name == name)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-import-\(ProcessInfo.processInfo.processIdentifier)-names-\(stem)")
            .appendingPathComponent("inside")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let written = try imported.write(to: directory)
        #expect(written.profile == directory.appendingPathComponent("\(stem).peripheral.json"))
        #expect(written.scenario == directory.appendingPathComponent("\(stem).scenario.json"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                == ["\(stem).peripheral.json", "\(stem).scenario.json"])
        #expect(imported.scenarioJSON().contains(#""peripheral": "\#(stem).peripheral.json""#))
    }
}
