import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("L2CAP channels", .timeLimit(.minutes(10)))
struct L2CAPTests {
    struct Rig {
        let bridge: MockBLEBridge
        let peripheral: MockPeripheralManager
        let central: MockCentralManager

        static func make(
            bridge configuration: MockBLEBridge.Configuration = .fast, pairing: PairingBehavior = .never
        ) async throws -> Rig {
            let bridge = MockBLEBridge(configuration: configuration)
            let peripheral = MockPeripheralManager(bridge: bridge)
            try await peripheral.startAdvertising(AdvertisementData(localName: "Stream"))
            let central = MockCentralManager(configuration: .init(pairing: pairing), bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            await bridge.advance(by: .milliseconds(200))
            try await central.connect(peripheral.identifier)
            return Rig(bridge: bridge, peripheral: peripheral, central: central)
        }

        /// Opens a channel and returns both ends.
        func open(_ psm: UInt16) async throws -> (central: L2CAPChannel, peripheral: L2CAPChannel) {
            let events = peripheral.events()
            let centralEnd = try await central.openL2CAPChannel(psm, on: peripheral.identifier)
            for await case .l2capChannelOpened(let channel) in events { return (centralEnd, channel) }
            throw CoreBluetoothError(.unknown)
        }
    }

    /// Collects `count` bytes from a channel's incoming stream.
    static func read(_ count: Int, from channel: L2CAPChannel) async -> Data {
        var received = Data()
        for await chunk in channel.incoming {
            received += chunk
            if received.count >= count { break }
        }
        return received
    }

    static func bytes(_ count: Int, seed: UInt8 = 0) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) })
    }

    @Test("Opening and sending from a cancelled task start nothing; a read of incoming ends when its task is cancelled")
    func cancellation() async throws {
        let rig = try await Self.Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let opening = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            _ = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        await #expect(throws: CancellationError.self) { try await opening.value }
        #expect(!(await rig.bridge.log.contains { $0.kind == .l2cap && $0.detail?.hasPrefix("opened") == true }))

        let (centralEnd, peripheralEnd) = try await rig.open(psm)
        let sending = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await centralEnd.send(Self.bytes(100))
        }
        await #expect(throws: CancellationError.self) { try await sending.value }
        // Nothing of the cancelled send arrives: the next bytes are the first the peripheral reads.
        let reading = Task { await Self.read(3, from: peripheralEnd) }
        try await centralEnd.send(Data([7, 8, 9]))
        #expect(await reading.value == Data([7, 8, 9]))

        let waiting = Task { await Self.read(1, from: centralEnd) }  // nothing is coming
        waiting.cancel()
        #expect(await waiting.value.isEmpty)
        #expect(await rig.bridge.pendingOperations.isEmpty)
    }

    /// A read with a timeout: the task reading is cancelled while it waits. It gets no bytes;
    /// the channel stays open, and what the other end sends later goes to the next read.
    @Test("A read of incoming cancelled while it waits ends that read only: later bytes go to the next read")
    func aCancelledReadLeavesTheChannelsBytesForTheNextRead() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (centralEnd, peripheralEnd) = try await rig.open(psm)
        try await rig.bridge.run {
            let waiting = rig.bridge.task { () -> Data? in
                var iterator = centralEnd.incoming.makeAsyncIterator()
                return await iterator.next()
            }
            // (Time moves once the read waits: it is waiting when the timeout cancels it.)
            try await rig.bridge.clock.sleep(for: .milliseconds(50))
            waiting.cancel()
            #expect(try await waiting.value == nil)
            try await peripheralEnd.send(Data("ack".utf8))
            var iterator = centralEnd.incoming.makeAsyncIterator()
            #expect(await iterator.next() == Data("ack".utf8))
            // A read cancelled before it begins gets nothing and takes nothing either.
            try await peripheralEnd.send(Data("more".utf8))
            let cancelled = rig.bridge.task { () -> Data? in
                withUnsafeCurrentTask { $0?.cancel() }
                return await centralEnd.incoming.first { _ in true }
            }
            #expect(try await cancelled.value == nil)
            #expect(await iterator.next() == Data("more".utf8))
        }
        await peripheralEnd.close()
        #expect(await Self.read(1, from: centralEnd).isEmpty)  // the channel closed: reads end
        #expect(await rig.bridge.pendingOperations.isEmpty)
    }

    /// On the air the peripheral's connection response reaches the central before its
    /// disconnection request: CoreBluetooth reports the channel open, then its streams end.
    @Test(
        "A channel the peripheral closes as it opens is still returned by the open; its reads end and sends fail",
        arguments: [MockBLEBridge.Configuration.fast, .realistic(seed: 5)])
    func aChannelClosedAtOnceIsStillOpened(configuration: MockBLEBridge.Configuration) async throws {
        let rig = try await Rig.make(bridge: configuration)
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let events = rig.peripheral.events()
        try await rig.bridge.run {
            let refusing = rig.bridge.task {
                for await case .l2capChannelOpened(let channel) in events {
                    await channel.close()
                    return
                }
            }
            let channel = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
            #expect(channel.psm == psm)
            try await refusing.value
            #expect(await Self.read(1, from: channel).isEmpty)
            await #expect(throws: CoreBluetoothError(.notConnected)) { try await channel.send(Data([1])) }
        }
        let details = await rig.bridge.log.filter { $0.kind == .l2cap }.compactMap(\.detail)
        #expect(details == ["published 0x0080", "opened 0x0080 #1", "closed #1"])
        #expect(await rig.bridge.finish() == .clean)
    }

    /// CoreBluetooth refuses such a PSM itself: `openL2CAPChannel(0x2349)` fails with
    /// `CBError.invalidParameters` (embassy-rs/trouble#371). A peripheral manager publishes only
    /// PSMs of the LE dynamic range, so the kit refuses every other one the same way.
    @Test(
        "Opening a PSM outside the LE dynamic range fails at once with invalidParameters; nothing goes on the air",
        arguments: [0x0000, 0x0001, 0x0025, 0x007F, 0x0100, 0x2349, 0xFFFF] as [UInt16])
    func aPSMOutsideTheDynamicRangeIsRefusedLocally(psm: UInt16) async throws {
        let rig = try await Rig.make(bridge: .realistic(seed: 12))
        let before = await rig.bridge.now
        let error = await #expect(throws: CoreBluetoothError(.invalidParameters)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        let hex = String(format: "0x%04X", psm)
        #expect(error?.reason?.hasPrefix("PSM \(hex) is outside the LE dynamic range 0x0080…0x00FF") == true)
        #expect(await rig.bridge.now == before)
        #expect(await !rig.bridge.log.contains { $0.kind == .l2cap })
        let refusal = await rig.bridge.log.last
        #expect(refusal?.kind == .refused && refusal?.error == .coreBluetooth(CoreBluetoothError(.invalidParameters)))
        #expect(refusal?.detail == "openL2CAPChannel(\(hex))")
        #expect(await rig.bridge.pendingOperations.isEmpty)
    }

    @Test func publishingAllocatesPSMsFromTheDynamicRange() async throws {
        let rig = try await Rig.make()
        let first = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let second = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: true)
        #expect(first == 0x0080)
        #expect(second == 0x0081)
        try await rig.peripheral.unpublishL2CAPChannel(first)
        #expect(try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false) == 0x0080)  // reused
        // (It used to throw the connect side's L2CAPError(.psmNotSupported), "L2CAP connection refused".)
        await #expect(throws: APIMisuseError.l2capChannelNotPublished(psm: 0x00C0)) {
            try await rig.peripheral.unpublishL2CAPChannel(0x00C0)
        }
        await #expect(throws: APIMisuseError.l2capChannelNotPublished(psm: 0x0080)) {
            try await rig.peripheral.unpublishL2CAPChannel(first)
            try await rig.peripheral.unpublishL2CAPChannel(first)
        }
        #expect(
            await rig.bridge.log.filter { $0.kind == .l2cap }.compactMap(\.detail).prefix(3) == [
                "published 0x0080", "published 0x0081 (encryption required)", "unpublished 0x0080",
            ])
    }

    @Test func theDynamicRangeRunsOut() async throws {
        let rig = try await Rig.make()
        for _ in 0..<128 { _ = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false) }
        await #expect(throws: L2CAPError(.noResourcesAvailable)) {
            try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        }
    }

    /// Bluetooth falling below powered off clears what the peripheral published, as it clears its
    /// database: an app that publishes again on `poweredOn` gets the same PSM back, however often
    /// it does.
    @Test("A peripheral's PSMs are unpublished when its Bluetooth falls below poweredOff, as its services are removed")
    func fallingBelowPoweredOffUnpublishesThePSMs() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        await rig.peripheral.simulateStateChange(.resetting)
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.send(Data([1])) }
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await peripheral.send(Data([1])) }
        #expect(
            await rig.bridge.log.filter { $0.kind == .l2cap }.compactMap(\.detail).suffix(2) == [
                "closed #\(central.id)", "unpublished 0x0080",
            ])
        await rig.peripheral.simulateStateChange(.poweredOn)
        await #expect(throws: APIMisuseError.l2capChannelNotPublished(psm: psm)) {
            try await rig.peripheral.unpublishL2CAPChannel(psm)
        }
        try await rig.peripheral.startAdvertising(AdvertisementData(localName: "Stream"))
        try await rig.central.connect(rig.peripheral.identifier)
        await #expect(throws: L2CAPError(.psmNotSupported)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        // Each reset gives the PSM back: the dynamic range never runs out.
        for _ in 0..<130 {
            #expect(try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false) == psm)
            await rig.peripheral.simulateStateChange(.resetting)
            await rig.peripheral.simulateStateChange(.poweredOn)
        }
    }

    /// Turned off, a peripheral keeps its database, and its PSMs with it: the channels open on
    /// them close with their links, and a central opens the same PSM again once it is back.
    @Test("A peripheral turned off and on keeps its PSMs; its channels closed with their links")
    func poweringOffKeepsThePSMs() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, _) = try await rig.open(psm)
        await rig.peripheral.simulateStateChange(.poweredOff)
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.send(Data([1])) }
        await rig.peripheral.simulateStateChange(.poweredOn)
        try await rig.central.connect(rig.peripheral.identifier)
        let again = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        #expect(again.psm == psm)
        try await rig.peripheral.unpublishL2CAPChannel(psm)
    }

    @Test func aChannelCarriesBytesBothWaysInOrder() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        #expect(central.psm == psm && peripheral.psm == psm)
        #expect(central.peer == rig.peripheral.identifier && peripheral.peer == rig.central.identifier)
        #expect(central.id == peripheral.id)
        #expect(central != peripheral)  // two ends of one channel
        #expect(central.mtu == 2_048)
        #expect(central.description == "L2CAP channel 0x0080 #1")

        let upload = Self.bytes(5_000)
        try await central.send(upload.prefix(3_000))
        try await central.send(upload.suffix(2_000))
        #expect(await Self.read(5_000, from: peripheral) == upload)

        let download = Self.bytes(700, seed: 9)
        try await peripheral.send(download)
        #expect(await Self.read(700, from: central) == download)
        let sends = await rig.bridge.log.filter { $0.kind == .l2cap && $0.value != nil }
        #expect(sends.map { $0.value?.count } == [3_000, 2_000, 700])
        #expect(sends[0].detail == "central sent 3000 bytes in 13 K-frames on #1")
    }

    @Test func realisticSendsTakeConnectionEventsPacedByCredits() async throws {
        let rig = try await Rig.make(bridge: .realistic(seed: 8))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        let before = await rig.bridge.now
        // 10,000 bytes: four 2,048-byte SDUs of 9 K-frames and one of 1,808 bytes in 8: 44
        // K-frames, as many per connection event as the link and the 10 credits allow.
        try await central.send(Self.bytes(10_000))
        let perEvent = min(LinkTiming.realistic.packetsPerConnectionEvent, 10)
        let events = (44 + perEvent - 1) / perEvent
        let elapsed = before.duration(to: await rig.bridge.now)
        #expect(elapsed > .milliseconds(events * 28) && elapsed < .milliseconds(events * 32))
        let send = await rig.bridge.log.last { $0.kind == .l2cap && $0.value != nil }
        #expect(send?.detail == "central sent 10000 bytes in 44 K-frames on #1")
        #expect(await Self.read(10_000, from: peripheral) == Self.bytes(10_000))
    }

    @Test func openingAnUnpublishedPSMIsRefused() async throws {
        let rig = try await Rig.make()
        await #expect(throws: L2CAPError(.psmNotSupported)) {
            try await rig.central.openL2CAPChannel(0x0080, on: rig.peripheral.identifier)
        }
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        try await rig.peripheral.unpublishL2CAPChannel(psm)
        await #expect(throws: L2CAPError(.psmNotSupported)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        let refusal = await rig.bridge.log.last { $0.kind == .l2cap && $0.error != nil }
        #expect(refusal?.detail == "open 0x0080")
        #expect(refusal?.error == .l2cap(L2CAPError(.psmNotSupported)))
    }

    @Test func anEncryptedPSMIsRefusedOnAPlainLinkUnlessTheCentralPairs() async throws {
        let plain = try await Rig.make()
        let psm = try await plain.peripheral.publishL2CAPChannel(requiresEncryption: true)
        await #expect(throws: L2CAPError(.insufficientAuthentication)) {
            try await plain.central.openL2CAPChannel(psm, on: plain.peripheral.identifier)
        }

        let pairing = try await Rig.make(pairing: .automatic(duration: .milliseconds(500), outcome: .succeeds))
        let securePSM = try await pairing.peripheral.publishL2CAPChannel(requiresEncryption: true)
        let (central, peripheral) = try await pairing.open(securePSM)
        #expect(
            await pairing.bridge.isBonded(
                central: pairing.central.identifier, peripheral: pairing.peripheral.identifier))
        try await central.send(Data([1, 2, 3]))
        #expect(await Self.read(3, from: peripheral) == Data([1, 2, 3]))

        let rejected = try await Rig.make(pairing: .automatic(duration: .milliseconds(500), outcome: .rejected))
        let rejectedPSM = try await rejected.peripheral.publishL2CAPChannel(requiresEncryption: true)
        await #expect(throws: L2CAPError(.insufficientAuthentication)) {
            try await rejected.central.openL2CAPChannel(rejectedPSM, on: rejected.peripheral.identifier)
        }
    }

    @Test func openingWithoutALinkFails() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
    }

    @Test func closingEndsBothStreamsAndLaterSendsFail() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        try await central.send(Data([7]))
        await peripheral.close()
        #expect(await Self.read(2, from: peripheral) == Data([7]))  // what arrived, then the end
        #expect(await Self.read(1, from: central).isEmpty)
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.send(Data([8])) }
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await peripheral.send(Data([8])) }
        await central.close()  // closing twice is harmless
    }

    @Test("Unpublishing a PSM closes its channels as a peer's close does: sends at either end fail, streams end")
    func unpublishingClosesTheChannelsOnThePSM() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        let (secondCentral, secondPeripheral) = try await rig.open(psm)
        try await central.send(Data([7]))
        try await rig.peripheral.unpublishL2CAPChannel(psm)
        // (Required before reading: a stream that did not end would keep the read waiting.)
        for end in [central, peripheral, secondCentral, secondPeripheral] {
            try await #require(throws: CoreBluetoothError(.notConnected)) { try await end.send(Data([8])) }
        }
        #expect(await Self.read(2, from: peripheral) == Data([7]))  // what arrived, then the end
        #expect(await Self.read(1, from: central).isEmpty)
        #expect(await Self.read(1, from: secondCentral).isEmpty)
        #expect(await Self.read(1, from: secondPeripheral).isEmpty)
        #expect(
            await rig.bridge.log.filter { $0.kind == .l2cap && $0.value == nil }.compactMap(\.detail).suffix(3) == [
                "unpublished 0x0080", "closed #1", "closed #2",
            ])
        await #expect(throws: L2CAPError(.psmNotSupported)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        await central.close()  // closing a channel the unpublishing closed is harmless
    }

    @Test("Unpublishing a PSM leaves open the channels on another PSM and those of another peripheral at that PSM")
    func unpublishingLeavesOtherChannelsOpen() async throws {
        let rig = try await Rig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let otherPSM = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let other = Rig(bridge: rig.bridge, peripheral: MockPeripheralManager(bridge: rig.bridge), central: rig.central)
        try await other.peripheral.startAdvertising(AdvertisementData(localName: "Other"))
        await rig.bridge.advance(by: .milliseconds(200))
        try await rig.central.connect(other.peripheral.identifier)
        let samePSM = try await other.peripheral.publishL2CAPChannel(requiresEncryption: false)
        #expect(samePSM == psm)  // each peripheral allocates its own
        let closing = try await rig.open(psm)
        let onOtherPSM = try await rig.open(otherPSM)
        let onOtherPeripheral = try await other.open(samePSM)

        try await rig.peripheral.unpublishL2CAPChannel(psm)
        try await #require(throws: CoreBluetoothError(.notConnected)) { try await closing.central.send(Data([9])) }
        #expect(await Self.read(1, from: closing.central).isEmpty)
        for (central, peripheral) in [onOtherPSM, onOtherPeripheral] {
            try await central.send(Data([1, 2]))
            #expect(await Self.read(2, from: peripheral) == Data([1, 2]))
            try await peripheral.send(Data([3]))
            #expect(await Self.read(1, from: central) == Data([3]))
        }
        let closed = await rig.bridge.log.compactMap(\.detail).filter { $0.hasPrefix("closed #") }
        #expect(closed == ["closed #\(closing.central.id)"])
    }

    @Test func losingTheLinkMidStreamFailsTheSendAndEndsTheStreams() async throws {
        let rig = try await Rig.make(bridge: .realistic(seed: 2))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (central, peripheral) = try await rig.open(psm)
        await rig.bridge.schedule(
            .disconnect(
                central: rig.central.identifier, peripheral: rig.peripheral.identifier,
                error: CoreBluetoothError(.connectionTimeout)), after: .milliseconds(100))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) { try await central.send(Self.bytes(20_000)) }
        // The K-frames cross four per connection event (30 ± 2 ms): by the drop at 100 ms the
        // first SDU's nine frames have crossed, so it arrived; the rest of the send is lost,
        // and the stream ends. (An SDU is at most the channel MTU, 2,048 bytes.)
        #expect(await Self.read(20_000, from: peripheral) == Self.bytes(20_000).prefix(2_048))
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.send(Data([1])) }
    }

    /// Who closes a channel while a send on it is crossing.
    enum Closing: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case byTheReceiver, byTheSender, byUnpublishingThePSM

        var testDescription: String { rawValue }

        /// Closes the central-to-peripheral channel `ends` of `rig`, opened at `psm`.
        func close(_ ends: (central: L2CAPChannel, peripheral: L2CAPChannel), psm: UInt16, of rig: Rig) async throws {
            switch self {
            case .byTheReceiver: await ends.peripheral.close()
            case .byTheSender: await ends.central.close()
            case .byUnpublishingThePSM: try await rig.peripheral.unpublishL2CAPChannel(psm)
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A send still crossing when its channel closes throws notConnected, and no more of its bytes arrive",
        arguments: Closing.allCases)
    func aSendCrossingWhenItsChannelClosesFails(closing: Closing) async throws {
        let rig = try await Rig.make(bridge: .realistic(seed: 2))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let ends = try await rig.open(psm)
        let start = await rig.bridge.now
        try await rig.bridge.run {
            rig.bridge.task {
                try await rig.bridge.clock.sleep(for: .milliseconds(100))
                try await closing.close(ends, psm: psm, of: rig)
            }
            await #expect(throws: CoreBluetoothError(.notConnected)) { try await ends.central.send(Self.bytes(20_000)) }
            // It failed as the channel closed, not when its last K-frame would have crossed.
            #expect(start.duration(to: await rig.bridge.now) == .milliseconds(100))
        }
        // The K-frames cross four per connection event (30 ± 2 ms): by the close at 100 ms the
        // first SDU's nine frames have crossed, so it arrived; the rest of the send is lost,
        // and the stream ends.
        #expect(await Self.read(20_000, from: ends.peripheral) == Self.bytes(20_000).prefix(2_048))
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await ends.central.send(Data([1])) }
    }

    @Test(
        "A send whose bytes all arrived before its channel closed succeeds, fast and realistic",
        arguments: [MockBLEBridge.Configuration.fast, .realistic(seed: 2)], Closing.allCases)
    func aSendThatArrivedBeforeTheCloseSucceeds(
        configuration: MockBLEBridge.Configuration, closing: Closing
    ) async throws {
        let rig = try await Rig.make(bridge: configuration)
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let ends = try await rig.open(psm)
        try await ends.central.send(Self.bytes(5_000))
        try await closing.close(ends, psm: psm, of: rig)
        #expect(await Self.read(5_001, from: ends.peripheral) == Self.bytes(5_000))  // all of it, then the end
    }

    @Test func channelsAndErrorsDescribeThemselves() {
        #expect(L2CAPError(.psmNotSupported).description.hasPrefix("L2CAP connection refused (0x0002 psmNotSupported)"))
        #expect(L2CAPError.Code.insufficientEncryption.rawValue == 0x0008)
        #expect(
            APIMisuseError.l2capChannelNotPublished(psm: 0xC0).description
                == "No L2CAP channel is published at PSM 0x00C0 by this peripheral manager, so there is nothing to "
                + "unpublish. Unpublish a PSM that publishL2CAPChannel returned, once.")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run whose body reads a channel that nothing sends on stalls naming the read, its end and its link")
    func aStalledChannelReadIsNamed() async throws {
        let rig = try await Self.Rig.make(bridge: .init(seed: 31))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (centralEnd, _) = try await rig.open(psm)
        let stall = await #expect(throws: MockBLEBridge.Stall.self) {
            try await rig.bridge.run(stallPatience: .milliseconds(100)) {
                _ = await centralEnd.incoming.first { _ in true }
            }
        }
        let reads = stall?.waiting.filter {
            if case .operation(let name, _, _, _, _) = $0 { name.contains("L2CAP") } else { false }
        }
        #expect(
            reads == [
                .operation(
                    "reading the incoming bytes of L2CAP channel #\(centralEnd.id) at the central",
                    central: rig.central.identifier, peripheral: rig.peripheral.identifier, characteristic: nil,
                    since: await rig.bridge.now)
            ])
        #expect(stall?.seed == 31)
    }

    @Test("A read of a channel outside a run that nothing sends on is reported, and a send ends it")
    func aQuietChannelReadOutsideARunIsReported() async throws {
        let rig = try await Self.Rig.make(bridge: .init(seed: 32))
        rig.bridge.clock.setQuietWaitPatience(.milliseconds(200))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let (centralEnd, peripheralEnd) = try await rig.open(psm)
        let reader = Task { await Self.read(3, from: peripheralEnd) }
        let reports = await rig.bridge.clock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.hasPrefix(
                "a task awaiting the incoming bytes of L2CAP channel #\(centralEnd.id) at the peripheral, on a "
                    + "MockBLEBridge (seed 32, fast mode), has waited ") == true)
        #expect(
            reports.first?.contains(
                "It waits for bytes sent from the other end, or the channel closing, which outside a run only other "
                    + "code of the test brings about") == true)
        try await centralEnd.send(Data([1, 2, 3]))
        #expect(await reader.value == Data([1, 2, 3]))
        #expect(rig.bridge.clock.quietWaitReports.count == 1)
    }
}
