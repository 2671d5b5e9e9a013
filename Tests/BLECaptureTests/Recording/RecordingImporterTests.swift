import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// How the importer turns each kind of recorded event into steps or warnings, and each of
/// its errors.
@Suite("The recording importer", .timeLimit(.minutes(10)))
struct RecordingImporterTests {
    static let p = UUID(uuidString: "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42")!
    static let other = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    /// A session with every case the importer distinguishes; events are numbered from 1.
    static var session: SessionRecording {
        let att = { (code: Int) in RecordedError(domain: .att, code: code) }
        let cb = { (code: Int) in RecordedError(domain: .coreBluetooth, code: code) }
        let events: [RecordedEvent] = [
            .discovered(
                peripheral: p, name: "Thermo", advertisement: AdvertisementData(localName: "Thermo"), rssi: -50),
            .connectionFailed(peripheral: p, error: cb(10)),  // 2
            .connected(peripheral: p, mtu: 185),
            .servicesDiscovered(
                peripheral: p, services: [RecordedService(uuid: "1809", isPrimary: true, handle: 1, endHandle: 6)]),
            .characteristicsDiscovered(
                peripheral: p, service: 1,
                characteristics: [
                    RecordedCharacteristic(uuid: "2A21", properties: [.read, .write], handle: 3),
                    RecordedCharacteristic(uuid: "2A1C", properties: [.indicate], handle: 5),
                ]),
            .notificationState(peripheral: p, handle: 5, enabled: true, error: nil),  // 6: descriptors unknown
            .descriptorsDiscovered(
                peripheral: p, characteristic: 5, descriptors: [RecordedDescriptor(uuid: "2902", handle: 6)]),
            .read(peripheral: p, handle: 3, result: .success(.bytes(Data([0x0A])))),
            .read(peripheral: p, handle: 3, result: .failure(att(5))),
            .read(peripheral: p, handle: 3, result: .failure(cb(3))),  // 10
            .write(
                peripheral: p, handle: 3, value: .bytes(Data([1])), withResponse: true,
                error: RecordedError(domain: .kit, code: 0)),  // 11
            .write(peripheral: p, handle: 3, value: .bytes(Data([2])), withResponse: true, error: att(3)),
            .notificationState(peripheral: p, handle: 5, enabled: true, error: nil),
            .valueUpdated(peripheral: p, handle: 5, value: .bytes(Data([0x25])), isIndication: true),
            .disconnected(peripheral: p, error: cb(6)),
            .read(peripheral: p, handle: 3, result: .success(.bytes(Data([0x0A])))),  // 16: no connection
            .connected(peripheral: p, mtu: 185),
            .read(peripheral: other, handle: 3, result: .success(.bytes(Data([0x0B])))),
            .disconnected(peripheral: p, error: cb(7)),
        ]
        return SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(10 * $0.offset), event: $0.element)
            })
    }

    /// A recording holds no descriptor reads: a discovered descriptor is written empty, with a
    /// warning that says so of the recording (it said the descriptor "was not read in the capture").
    @Test func aDescriptorOfARecordingIsWrittenEmptySayingTheRecordingHoldsNoDescriptorReads() throws {
        let events: [RecordedEvent] = [
            .discovered(
                peripheral: Self.p, name: "Thermo", advertisement: AdvertisementData(localName: "Thermo"), rssi: -50),
            .connected(peripheral: Self.p, mtu: 185),
            .servicesDiscovered(
                peripheral: Self.p,
                services: [RecordedService(uuid: "1809", isPrimary: true, handle: 1, endHandle: 4)]),
            .characteristicsDiscovered(
                peripheral: Self.p, service: 1,
                characteristics: [RecordedCharacteristic(uuid: "2A21", properties: [.read], handle: 3)]),
            .descriptorsDiscovered(
                peripheral: Self.p, characteristic: 3, descriptors: [RecordedDescriptor(uuid: "2901", handle: 4)]),
        ]
        let session = SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(10 * $0.offset), event: $0.element)
            })
        let imported = try RecordingImporter().importRecording(session, name: "thermo")
        #expect(
            imported.warnings.map(\.message) == [
                "descriptor 2901 at handle 0x0004 has no value in the recording, which holds no descriptor reads; its "
                    + "value is written empty"
            ])
    }

    @Test func eachKindOfEventBecomesItsStepOrAWarningNamingTheEvent() async throws {
        let imported = try RecordingImporter().importRecording(Self.session, name: "thermo")
        let ops = imported.scenario.steps.compactMap { step -> String? in
            switch step.operation {
            case .advance, .advanceTo: nil
            case .inject(let injection): "inject \(injection.target.rawValue)"
            case .disconnect(let side): "disconnect by \(side.rawValue)"
            case .fault(let kind, _, _): "fault \(kind.rawValue)"
            default: step.operation.name
            }
        }
        #expect(
            ops == [
                "scan", "connect", "discover", "read", "inject read", "read", "inject write", "write", "subscribe",
                "indicate", "fault disconnect", "scan", "connect", "disconnect by peripheral",
            ])
        #expect(
            imported.warnings.map(\.event) == [2, 6, 10, 11, 16])
        #expect(
            imported.warnings[0].description == "event 2: a failed connection attempt (cb error 10) is not replayed")
        #expect(imported.warnings[4].message == "a read outside a connection is not replayed")
        #expect(imported.peripheral == Self.p)
        #expect(imported.linkFigures.connections == 2)
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.first { $0.op == "read" && !$0.ok }?.error?.code == 5)
    }

    /// A session as the CoreBluetooth adapters record it: CoreBluetooth hides handles, so each
    /// service, characteristic and descriptor carries the number the adapter gave its object in
    /// discovery order (a service's end is its own number, its characteristics come after all
    /// the services), and the reconnection's rediscovery gives the new objects new numbers.
    static var sessionNumberedInDiscoveryOrder: SessionRecording {
        var events: [RecordedEvent] = [
            .discovered(peripheral: p, name: "HRM", advertisement: AdvertisementData(localName: "HRM"), rssi: -50)
        ]
        for (connection, first) in [(0, UInt16(1)), (1, UInt16(8))] {
            let n = { (offset: UInt16) in first + offset }
            events += [
                .connected(peripheral: p, mtu: 185),
                .servicesDiscovered(
                    peripheral: p,
                    services: [
                        RecordedService(uuid: "180D", isPrimary: true, handle: n(0), endHandle: n(0)),
                        RecordedService(uuid: "180F", isPrimary: true, handle: n(1), endHandle: n(1)),
                    ]),
                .characteristicsDiscovered(
                    peripheral: p, service: n(0),
                    characteristics: [
                        RecordedCharacteristic(uuid: "2A37", properties: [.notify], handle: n(2)),
                        RecordedCharacteristic(uuid: "2A38", properties: [.read], handle: n(3)),
                    ]),
                .characteristicsDiscovered(
                    peripheral: p, service: n(1),
                    characteristics: [RecordedCharacteristic(uuid: "2A19", properties: [.read, .notify], handle: n(4))]),
                .descriptorsDiscovered(
                    peripheral: p, characteristic: n(2), descriptors: [RecordedDescriptor(uuid: "2902", handle: n(5))]),
                .descriptorsDiscovered(peripheral: p, characteristic: n(3), descriptors: []),
                .descriptorsDiscovered(
                    peripheral: p, characteristic: n(4), descriptors: [RecordedDescriptor(uuid: "2902", handle: n(6))]),
                .read(peripheral: p, handle: n(3), result: .success(.bytes(Data([0x01])))),
                .read(peripheral: p, handle: n(4), result: .success(.bytes(Data([UInt8(100 - connection)])))),
                .notificationState(peripheral: p, handle: n(2), enabled: true, error: nil),
                .valueUpdated(
                    peripheral: p, handle: n(2), value: .bytes(Data([0x06, UInt8(connection)])), isIndication: false),
                .disconnected(
                    peripheral: p, error: connection == 0 ? RecordedError(CoreBluetoothError(.connectionTimeout)) : nil),
            ]
        }
        return SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(10 * $0.offset), event: $0.element)
            })
    }

    @Test(
        "A session recorded on CoreBluetooth, its attributes numbered in discovery order, imports every characteristic once and replays both connections"
    )
    func aSessionNumberedInDiscoveryOrderImportsEveryCharacteristicOnce() async throws {
        let imported = try RecordingImporter().importRecording(Self.sessionNumberedInDiscoveryOrder, name: "hrm")
        #expect(imported.warnings.map(\.description) == [])
        let structure = imported.profile.services.map { service in
            "\(service.uuid): "
                + service.characteristics.map { "\($0.uuid) \($0.properties.names)" }.joined(separator: ", ")
        }
        #expect(structure == ["180D: 2A37 [\"notify\"], 2A38 [\"read\"]", "180F: 2A19 [\"read\", \"notify\"]"])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let replayed = trace.records.compactMap { record -> String? in
            switch record.op {
            case "read": "read " + FixtureBytes.hexString(record.value ?? Data())
            case "notify": "notify " + (record.received ?? []).map { FixtureBytes.hexString($0) }.joined()
            case "subscribe", "connect", "fault", "disconnect": record.op
            default: nil
            }
        }
        #expect(
            replayed == [
                "connect", "read 01", "read 64", "subscribe", "notify 0600", "fault",
                "connect", "read 01", "read 63", "subscribe", "notify 0601", "disconnect",
            ])
    }

    @Test(
        "A link the app saw end with another CoreBluetooth error than the timeout or the peripheral's disconnection ends with that error in the replay"
    )
    func aLinkThatEndedWithAnotherErrorEndsWithItInTheReplay() async throws {
        let cb = { (code: CoreBluetoothError.Code) in RecordedError(CoreBluetoothError(code)) }
        let events: [RecordedEvent] = [
            .discovered(
                peripheral: Self.p, name: "Lock", advertisement: AdvertisementData(localName: "Lock"), rssi: -50),
            .connected(peripheral: Self.p, mtu: 23),
            .disconnected(peripheral: Self.p, error: cb(.encryptionTimedOut)),
            .connected(peripheral: Self.p, mtu: 23),
            .disconnected(peripheral: Self.p, error: cb(.peerRemovedPairingInformation)),
            .connected(peripheral: Self.p, mtu: 23),
            .disconnected(peripheral: Self.p, error: cb(.peripheralDisconnected)),
        ]
        let recording = SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(10 * $0.offset), event: $0.element)
            })
        let imported = try RecordingImporter().importRecording(recording, name: "lock")
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let ends = trace.records.compactMap { record -> String? in
            guard let reason = record.fields.first(where: { $0.key == "reason" })?.value else { return nil }
            return "\(record.op): \(reason.json)"
        }
        #expect(
            ends == [
                #"fault: {"central":{"domain":"cb","code":15,"name":"encryptionTimedOut"},"peripheral":{"unsubscribed":[]}}"#,
                #"fault: {"central":{"domain":"cb","code":14,"name":"peerRemovedPairingInformation"},"peripheral":{"unsubscribed":[]}}"#,
                #"disconnect: {"central":{"domain":"cb","code":7,"name":"peripheralDisconnected"},"peripheral":{"unsubscribed":[]}}"#,
            ])
    }

    /// A session as a device's `ContinuousClock` times it: the notifications of one connection
    /// event reach the app microseconds apart, not at one instant.
    static func deviceTimedStream(burstGap: Duration) -> SessionRecording {
        var entries: [SessionRecording.Entry] = []
        func add(_ time: Duration, _ event: RecordedEvent) {
            entries.append(SessionRecording.Entry(time: time, event: event))
        }
        add(
            .zero,
            .discovered(peripheral: p, name: "Watch", advertisement: AdvertisementData(localName: "Watch"), rssi: -50))
        add(.milliseconds(40), .connected(peripheral: p, mtu: 185))
        add(
            .milliseconds(100),
            .servicesDiscovered(
                peripheral: p, services: [RecordedService(uuid: "FE00", isPrimary: true, handle: 1, endHandle: 4)]))
        add(
            .milliseconds(130),
            .characteristicsDiscovered(
                peripheral: p, service: 1,
                characteristics: [RecordedCharacteristic(uuid: "FE01", properties: [.notify], handle: 3)]))
        add(
            .milliseconds(160),
            .descriptorsDiscovered(
                peripheral: p, characteristic: 3, descriptors: [RecordedDescriptor(uuid: "2902", handle: 4)]))
        add(.milliseconds(190), .notificationState(peripheral: p, handle: 3, enabled: true, error: nil))
        // Three connection events 30 ms apart, each with 4 notifications.
        for event in 0..<3 {
            for packet in 0..<4 {
                let time = Duration.milliseconds(250 + 30 * event) + burstGap * packet + .microseconds(3)
                add(
                    time,
                    .valueUpdated(
                        peripheral: p, handle: 3, value: .bytes(Data([UInt8(4 * event + packet)])), isIndication: false)
                )
            }
        }
        add(entries[entries.count - 1].time + .milliseconds(100), .disconnected(peripheral: p, error: nil))
        return SessionRecording(entries: entries)
    }

    @Test func aSessionTimedOnADevicesClockImportsItsBurstsAndItsConnectionInterval() async throws {
        // Packets 5 µs apart (a device's clock), or a packet's air time apart on LE 1M (2.5 ms).
        for gap in [Duration.microseconds(5), .microseconds(2_500)] {
            let imported = try RecordingImporter().importRecording(Self.deviceTimedStream(burstGap: gap), name: "watch")
            let figures = imported.linkFigures
            #expect(figures.notifications == 12 && figures.notificationEvents == 3)
            #expect(figures.connectionInterval == .milliseconds(30))
            #expect(figures.packetsPerConnectionEvent == 4)
            // The scenario replays on the interval the session showed.
            #expect(imported.scenario.connectionInterval == .milliseconds(30))
            let bursts = imported.scenario.steps.compactMap { step -> [Data]? in
                if case .notifyBurst(_, let values) = step.operation { return values }
                return nil
            }
            #expect(bursts == (0..<3).map { event in (0..<4).map { Data([UInt8(4 * event + $0)]) } })
            var scenario = imported.scenario
            #expect(await ScenarioRunner(scenario).run().passed)
            scenario.mode = .realistic
            scenario.seed = 3
            let trace = await ScenarioRunner(scenario).run()
            #expect(trace.passed, "\(trace.failures)")
        }
        // 3 ms apart (the window), the notifications are events of their own: no full event is
        // followed by the next, so no interval, and none in the scenario.
        let sparse = try RecordingImporter().importRecording(
            Self.deviceTimedStream(burstGap: LinkFigures.connectionEventWindow), name: "watch")
        #expect(sparse.linkFigures.notificationEvents == 12 && sparse.linkFigures.connectionInterval == nil)
        #expect(sparse.scenario.connectionInterval == nil)
        #expect(sparse.scenario.steps.allSatisfy { if case .notifyBurst = $0.operation { false } else { true } })
    }

    @Test func aReconnectionWithAnotherATTMTUReplaysWithThatMTU() async throws {
        let events: [RecordedEvent] = [
            .discovered(
                peripheral: Self.p, name: "Watch", advertisement: AdvertisementData(localName: "Watch"), rssi: -50),
            .connected(peripheral: Self.p, mtu: 247),
            .disconnected(peripheral: Self.p, error: RecordedError(domain: .coreBluetooth, code: 7)),
            .connected(peripheral: Self.p, mtu: 185),
            .disconnected(peripheral: Self.p, error: nil),
            .connected(peripheral: Self.p, mtu: 517),
            .disconnected(peripheral: Self.p, error: nil),
        ]
        let recording = SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(10 * $0.offset), event: $0.element)
            })
        let imported = try RecordingImporter().importRecording(recording, name: "watch")
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.filter { $0.op == "connect" }.map(\.mtu) == [247, 185, 517])
        #expect(trace.records.filter { $0.op == "setMTU" }.count == 4)
    }

    @Test func aLinkOf517RecordsATTMTU515AndImportsWithAWarningThatItIsALowerBound() async throws {
        // The recorder knows the ATT_MTU only through maximumWriteValueLength(for:
        // .withoutResponse), which is at most 512: a link of 517 records 515.
        let bridge = MockBLEBridge()
        var profile = PeripheralProfile.bundled(.fitnessWatch)
        profile.preferredMTU = 517
        _ = try await profile.makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        let central = await RecordingCentralManager(MockCentralManager(bridge: bridge), recorder: recorder)
        var app = await WatchCompanionApp(central: central)
        let id = try await app.connect()
        try await central.cancelPeripheralConnection(id)
        let recording = recorder.recording
        let connected = try #require(recording.entries.first { if case .connected = $0.event { true } else { false } })
        #expect(connected.event == .connected(peripheral: id, mtu: 515))

        let imported = try RecordingImporter().importRecording(recording, name: "watch")
        let number = try #require(recording.entries.firstIndex(of: connected)) + 1
        #expect(
            imported.warnings.map(\.description).contains(
                "event \(number): the recorded ATT_MTU 515 means at least 515 (a recorder reads it from "
                    + "maximumWriteValueLength(for: .withoutResponse), at most 512, plus 3): the link may have had "
                    + "516 or 517; the replay uses 515, which no ATT operation tells apart from them (every value, at "
                    + "most 512 bytes, fits one PDU)"))
        #expect(imported.linkFigures.mtu == 515)
        // A link below that is known exactly: no warning.
        let exact = SessionRecording(
            entries: recording.entries.map { entry in
                guard case .connected(let peripheral, _) = entry.event else { return entry }
                return SessionRecording.Entry(time: entry.time, event: .connected(peripheral: peripheral, mtu: 514))
            })
        #expect(
            !(try RecordingImporter().importRecording(exact, name: "watch")).warnings.contains {
                $0.message.contains("ATT_MTU")
            })
    }

    @Test func writesWithoutResponseTheStackDroppedAreRecordedSoAndNotReplayed() async throws {
        let bridge = MockBLEBridge()
        let profile = try PeripheralProfile(
            json: Data(
                """
                {"name": "Pipe", "advertisement": {"localName": "Pipe", "serviceUUIDs": ["FFF0"]},
                 "services": [{"uuid": "FFF0", "characteristics": [
                   {"uuid": "FFF1", "properties": ["writeWithoutResponse"], "permissions": ["writeable"]}]}]}
                """.utf8), file: "pipe.json")
        let pipe = try await profile.makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        // A queue of one that fast mode holds until time passes: the second write is dropped.
        let central = await RecordingCentralManager(
            MockCentralManager(
                configuration: .init(mtu: .fixed(185), writeWithoutResponseQueue: .realistic(capacity: 1)),
                bridge: bridge),
            recorder: recorder)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(pipe.identifier)
        try await central.discoverAll(for: pipe.identifier)
        let up = try await central.characteristic("FFF1", of: pipe.identifier)
        try await central.writeValue(Data([1]), for: up, type: .withoutResponse)
        try await central.writeValue(Data([2]), for: up, type: .withoutResponse)
        try await central.cancelPeripheralConnection(pipe.identifier)
        let recording = recorder.recording
        let dropped = try #require(recording.entries.firstIndex { $0.event.isDroppedWrite }) + 1

        let imported = try RecordingImporter().importRecording(recording, name: "pipe")
        #expect(
            imported.warnings.map(\.description) == [
                "event \(dropped): a write of handle 0x\(hex(up.handle)) that failed with cb error 4 is not replayed"
            ])
        let writes = imported.scenario.steps.compactMap { step -> Data? in
            guard case .write(_, let value, false) = step.operation else { return nil }
            return value
        }
        #expect(writes == [Data([1])])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func aRecordingWithoutAConnectionNamesTheAdvertisersHeard() {
        let recording = SessionRecording(entries: [Self.session.entries[0]])
        #expect(throws: RecordingImportError.noConnection(advertisers: [Self.p])) {
            try RecordingImporter().importRecording(recording, name: "x")
        }
        #expect(
            RecordingImportError.noConnection(advertisers: []).description
                == "the recording shows no connection (it heard no advertisements); record a session that connects")
    }

    @Test func aPeripheralTheRecordingDidNotConnectToIsRefusedNamingTheOnesItDid() throws {
        #expect(throws: RecordingImportError.peripheralNotFound(Self.other, connected: [Self.p])) {
            try RecordingImporter(peripheral: Self.other).importRecording(Self.session, name: "x")
        }
        #expect(try RecordingImporter(peripheral: Self.p).importRecording(Self.session, name: "x").peripheral == Self.p)
    }

    @Test func filesThatAreMissingUnreadableOrNoRecordingAreRefusedSayingWhich() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "recording-importer-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("none.recording.json")
        #expect(throws: RecordingImportError.missingFile(missing.path)) {
            try RecordingImporter().importRecording(contentsOf: missing)
        }
        #expect(throws: RecordingImportError.unreadableFile(folder.path)) {
            try RecordingImporter().importRecording(contentsOf: folder)
        }
        let bad = folder.appendingPathComponent("bad.recording.json")
        try Data("{}".utf8).write(to: bad)
        #expect {
            try RecordingImporter().importRecording(contentsOf: bad)
        } throws: { error in
            guard case .invalidRecording(let problem) = error as? RecordingImportError else { return false }
            return problem.kind == .missingField("format") && problem.file == "bad.recording.json"
        }
        let good = folder.appendingPathComponent("thermo.recording.json")
        try Data(Self.session.jsonText.utf8).write(to: good)
        let imported = try RecordingImporter().importRecording(contentsOf: good)
        #expect(imported.name == "thermo" && imported.scenarioFileName == "thermo.scenario.json")
        let blocker = folder.appendingPathComponent("a-file")
        try Data().write(to: blocker)
        #expect(throws: RecordingImportError.unwritableOutput(blocker.path)) { try imported.write(to: blocker) }
        let written = try imported.write(to: folder.appendingPathComponent("out"))
        #expect(try String(contentsOf: written.scenario, encoding: .utf8) == imported.scenarioJSON())
        #expect(try String(contentsOf: written.profile, encoding: .utf8) == imported.profileJSON)
    }

    @Test(arguments: [
        (RecordingImportError.missingFile("/x"), "no such file: /x"),
        (.unreadableFile("/x"), "cannot read /x (check its permissions)"),
        (
            .peripheralNotFound(other, connected: [p]),
            "the recording has no connection to E621E1F8-C36C-495A-93FC-0C247A3E6E5F; it connected to "
                + "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42"
        ),
        (
            .missingPlaceholder("token", supplied: []),
            "the recording keeps the private value \"token\" out; supply a value for it (e.g. mockble import "
                + "--placeholder token=HEX)"
        ),
        (.unwritableOutput("/x"), "cannot write /x (check the directory and its permissions)"),
        (
            .invalidOutput(FixtureError(.missingField("name"), line: 0, column: 0, path: "", message: "m", fix: "f")),
            "the importer wrote an invalid document (please report this): m; f"
        ),
        (
            .invalidRecording(FixtureError(.invalidJSON, line: 1, column: 2, path: "", message: "m", fix: "f")),
            "not a valid recording: 1:2: m; f"
        ),
    ])
    func eachErrorSaysWhatWentWrongAndHowToFixIt(error: RecordingImportError, description: String) {
        #expect(error.description == description)
    }
}

extension RecordedEvent {
    /// Whether this is a write without response the stack dropped, its queue full.
    fileprivate var isDroppedWrite: Bool {
        guard case .write(_, _, _, false, let error) = self else { return false }
        return error == RecordedError(domain: .coreBluetooth, code: 4)
    }
}
