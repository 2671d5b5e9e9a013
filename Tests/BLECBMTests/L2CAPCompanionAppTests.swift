import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// The companion app's file transfer over L2CAP streams (``PhoneFileSender``,
/// ``WatchFileReceiver``), and the run loops its streams may be scheduled in.
@Suite(.timeLimit(.minutes(10)))
struct L2CAPCompanionAppTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func thePhoneSendsAFileInPartialWritesAndTheWatchConfirmsItsChecksum(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 301) : .init(seed: 301))
        let file = patterned(300_000, seed: 21)
        let (writes, phoneEvents, watchEvents) = try await bridge.run { @MainActor in
            let (phone, watch) = try await startCompanionApps(on: bridge, file: file, chunkSize: 3_000)
            try await bridge.waitForApp { phone.isDone }
            #expect(watch.files == [file])
            #expect(phone.acknowledged == [companionChecksum(file)])
            #expect(phone.sent == 4 + file.count)
            return (phone.writeResults, phone.events, watch.events)
        }
        // Four 2,048-byte SDUs of room: 3,000-byte chunks are often taken in part, and nothing
        // is refused.
        #expect(writes.contains { $0 > 0 && $0 < 3_000 })
        #expect(writes.allSatisfy { $0 >= 0 })
        #expect(writes.reduce(0, +) == 4 + file.count)
        #expect(phoneEvents == ["connected", "channel open", "in open", "out open"])
        #expect(watchEvents == ["state 5", "in open", "out open"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func afterTheLinkDropsMidTransferThePhoneSendsTheFileAgainOnANewChannel(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 302) : .init(seed: 302))
        let file = patterned(200_000, seed: 22)
        try await bridge.run { @MainActor in
            let (phone, watch) = try await startCompanionApps(on: bridge, file: file, chunkSize: 1_500)
            try await bridge.waitForApp { phone.sent > 50_000 }
            let first = try #require(phone.channel)
            let firstAtWatch = try #require(watch.channel)
            phone.manager.cancelPeripheralConnection(try #require(phone.peripheral))
            try await bridge.waitForApp { phone.isDone }
            #expect(phone.channelsOpened == 2 && watch.channelsOpened == 2)
            #expect(phone.disconnections == 1)
            // The first transfer never completed; the second delivered the file whole.
            #expect(watch.files == [file])
            #expect(phone.acknowledged == [companionChecksum(file)])
            #expect(
                phone.events == [
                    "connected", "channel open", "in open", "out open", "in end", "disconnected", "connected",
                    "channel open", "in open", "out open",
                ])
            #expect(watch.events == ["state 5", "in open", "out open", "in end", "in open", "out open"])
            // The first channel's streams were closed by the apps, and refuse to read or write.
            let streams: [Stream] = [
                first.inputStream, first.outputStream, firstAtWatch.inputStream, firstAtWatch.outputStream,
            ]
            for stream in streams {
                #expect(stream.streamStatus == .closed)
                #expect(stream.streamError == nil)
            }
            var byte: UInt8 = 0
            #expect(first.outputStream.write(&byte, maxLength: 1) == -1)
            #expect(first.inputStream.read(&byte, maxLength: 1) == -1)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func thePhoneOpensTheChannelAgainAfterTheSimulationRefusedIt() async throws {
        let bridge = MockBLEBridge(seed: 303)
        let file = patterned(10_000, seed: 23)
        try await bridge.run { @MainActor in
            let refusal = ErrorInjection(.l2capOpen, failure: .l2cap(.noResourcesAvailable))
            let (phone, watch) = try await startCompanionApps(
                on: bridge, file: file, central: .init(errorInjection: [refusal])
            ) { $0.openRetries = 1 }
            try await bridge.waitForApp { phone.isDone }
            #expect(phone.openErrors.count == 1)
            #expect(phone.openErrors.first as? L2CAPError == L2CAPError(.noResourcesAvailable))
            #expect(phone.channelsOpened == 1 && watch.channelsOpened == 1)
            #expect(watch.files == [file])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheCompanionAppTheSameLogAndStreamEvents() async throws {
        func transfer() async throws -> ([String], [String]) {
            let bridge = MockBLEBridge(configuration: .realistic(seed: 304))
            let events = try await bridge.run { @MainActor in
                let (phone, watch) = try await startCompanionApps(
                    on: bridge, file: patterned(60_000, seed: 24), chunkSize: 1_777)
                try await bridge.waitForApp { phone.sent > 20_000 }
                phone.manager.cancelPeripheralConnection(try #require(phone.peripheral))
                try await bridge.waitForApp { phone.isDone }
                return phone.events + ["—"] + watch.events + ["—"] + phone.writeResults.map(String.init)
            }
            return (await bridge.log.map(\.description), events)
        }
        let first = try await transfer()
        let second = try await transfer()
        #expect(first.0 == second.0)
        #expect(first.1 == second.1)
    }
}
