import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("The session recorder", .timeLimit(.minutes(10)))
struct SessionRecorderTests {
    static let watch = UUID(uuidString: "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42")!
    static let other = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    @Test func timesCountFromTheRecordersCreationOnTheClockGiven() async {
        let clock = VirtualClock(now: VirtualClock.Instant(offset: .seconds(5)))
        let recorder = SessionRecorder(clock: clock)
        recorder.record(.scanStopped)
        await clock.advance(by: .milliseconds(250))
        recorder.record(.scanStarted(services: nil, allowDuplicates: false))
        #expect(recorder.recording.entries.map(\.time) == [.zero, .milliseconds(250)])
    }

    @Test func aNewRecorderHasRecordedNothing() {
        #expect(SessionRecorder(clock: ContinuousClock()).recording == SessionRecording())
    }

    @Test func privateValuesAreRecordedAsTheirPlaceholderAndOthersAsTheyWere() {
        let recorder = SessionRecorder(clock: VirtualClock())
        recorder.markPrivate("2A3D", as: "token")
        let p = Self.watch
        recorder.record(
            .characteristicsDiscovered(
                peripheral: p, service: 1,
                characteristics: [
                    RecordedCharacteristic(uuid: "2A3D", properties: [.read, .write, .notify], handle: 3),
                    RecordedCharacteristic(uuid: "2A37", properties: [.read], handle: 5),
                ]))
        let secret = RecordedValue.bytes(Data([0xDE, 0xAD]))
        let events: [RecordedEvent] = [
            .read(peripheral: p, handle: 3, result: .success(secret)),
            .write(peripheral: p, handle: 3, value: secret, withResponse: true, error: nil),
            .valueUpdated(peripheral: p, handle: 3, value: secret, isIndication: false),
            .read(peripheral: p, handle: 3, result: .failure(RecordedError(domain: .att, code: 2))),
            .read(peripheral: p, handle: 5, result: .success(secret)),
            .read(peripheral: Self.other, handle: 3, result: .success(secret)),
        ]
        for event in events { recorder.record(event) }
        let recorded = recorder.recording.entries.dropFirst().map(\.event)
        #expect(
            recorded == [
                .read(peripheral: p, handle: 3, result: .success(.placeholder("token"))),
                .write(peripheral: p, handle: 3, value: .placeholder("token"), withResponse: true, error: nil),
                .valueUpdated(peripheral: p, handle: 3, value: .placeholder("token"), isIndication: false),
                // An error carries no value; another characteristic and another peripheral's
                // handle 3 (not discovered as private) are kept.
                events[3], events[4], events[5],
            ])
        #expect(recorder.recording.placeholders == ["token"])
    }

    @Test func errorsKeepTheirDomainAndCode() {
        #expect(RecordedError(ATTError(.insufficientEncryption)) == RecordedError(domain: .att, code: 0x0F))
        #expect(
            RecordedError(CoreBluetoothError(.peripheralDisconnected)) == RecordedError(domain: .coreBluetooth, code: 7)
        )
        #expect(RecordedError(CancellationError()) == RecordedError(domain: .kit, code: 1))
        #expect(
            RecordedError(APIMisuseError.notPoweredOn(operation: "connect", state: .poweredOff))
                == RecordedError(domain: .kit, code: 0))
        #expect(RecordedError.Domain.allCases.map(\.rawValue) == ["att", "cb", "kit"])
    }
}
