import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: L2CAP channels", .timeLimit(.minutes(10)))
struct WorldL2CAPTests {
    /// A link to a handler peripheral that published a PSM, with a channel open on it.
    static func channel(timing: LinkTiming = WorldHarness.steadyTiming) throws -> (WorldHarness, WorldLink, UInt64) {
        var (harness, link) = try WorldLink.make(
            timing: timing, peripheral: .init(name: "Sensor", requestHandling: .handler { _ in .success() }))
        let psm = try harness.mutate {
            try $0.publishL2CAPChannel(peripheral: link.peripheral, requiresEncryption: false)
        }
        #expect(psm == 0x0080)
        let start = harness.world.now
        let open = harness.perform(.openL2CAP(central: link.central, peripheral: link.peripheral, psm: psm))
        guard case .channel(let channel) = harness.reply(of: open) else {
            Issue.record("no channel: \(String(describing: harness.completions[open]))")
            throw CoreBluetoothError(.unknown)
        }
        // The connection request and its response take one connection event.
        #expect(harness.elapsed(open, since: start) == (timing == .instant ? .zero : ms(30)))
        return (harness, link, channel)
    }

    /// What happened on the link since `start`: write commands the peripheral received (by
    /// value), SDUs arriving (by length), and the completions of `names`.
    static func events(
        _ harness: WorldHarness, _ link: WorldLink, since start: VirtualClock.Instant,
        naming names: [OperationID: String]
    ) -> [Arrival.Named] {
        harness.timeline.compactMap { happening in
            let at = start.duration(to: happening.time)
            switch happening.effect {
            case .ask(link.peripheral, .command(let request)):
                return Arrival.Named(
                    "write \(request.value.map { $0.map { BridgeLogEntry.hex($0) }.joined() } ?? "")", at: at)
            case .channelData(_, let end, let data):
                return Arrival.Named("\(end == .central ? "central" : "peripheral") got \(data.count)", at: at)
            case .complete(let id, _):
                return names[id].map { Arrival.Named($0, at: at) }
            default:
                return nil
            }
        }
    }

    @Test("An open cancelled after its request crossed closes the channel the answer brings: none is left open")
    func anOpenCancelledAfterItsRequestCrossedLeavesNoChannel() throws {
        // One packet per connection event each way, and a notification queued first: the
        // request crosses at the first event, and the answer waits behind the notification for
        // the second, so the caller gives up while its request is answered but not back.
        var timing = WorldHarness.steadyTiming
        timing.packetsPerConnectionEvent = 1
        var (harness, link) = try WorldLink.make(
            timing: timing, peripheral: .init(name: "Sensor", requestHandling: .handler { _ in .success() }))
        let psm = try harness.mutate {
            try $0.publishL2CAPChannel(peripheral: link.peripheral, requiresEncryption: false)
        }
        let subscribe = harness.perform(link.subscribe(WorldUUID.notifying))
        #expect(harness.error(of: subscribe) == nil)
        let queued = try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        #expect(queued)
        let open = harness.start(.openL2CAP(central: link.central, peripheral: link.peripheral, psm: psm))
        let ran = harness.runNextEvent()
        #expect(ran)
        #expect(harness.world.channels.count == 1)
        #expect(harness.world.pending[open] != nil)
        harness.cancel(open)
        #expect(harness.world.pending[open]?.isCancelled == true)
        harness.runUntilIdle()
        #expect(harness.world.pending[open] == nil)
        #expect(harness.world.channels.isEmpty)
        #expect(harness.completions[open] == nil)
        let l2cap = harness.log(.l2cap).compactMap(\.detail)
        #expect(l2cap.contains { $0.hasPrefix("opened ") })
        #expect(l2cap.contains { $0.hasPrefix("closed #") })
    }

    @Test("K-frames cross in order with the other packets, and the send completes when its last frame crosses")
    func framesShareThePipe() throws {
        var (harness, link, channel) = try Self.channel()
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        try harness.writeWithoutResponse(Data([1]), to: WorldUUID.value, on: link)
        // 1,000 bytes: one SDU in five K-frames (245 bytes, then up to 247 each).
        let send = harness.start(.sendL2CAP(channel: channel, from: .central, testBytes(1_000)))
        try harness.writeWithoutResponse(Data([2]), to: WorldUUID.value, on: link)
        harness.serve(send)
        harness.runUntilIdle()
        #expect(
            Self.events(harness, link, since: start, naming: [send: "sent"]) == [
                .init("write 01", at: ms(30)), .init("peripheral got 1000", at: ms(60)), .init("sent", at: ms(60)),
                .init("write 02", at: ms(60)),
            ])
        // K-frames are not ATT PDUs.
        #expect(harness.world.attPDUCount - pdus == 2)
        let data = harness.timeline.compactMap { happening -> Data? in
            if case .channelData(channel, .peripheral, let data) = happening.effect { return data }
            return nil
        }
        #expect(data == [testBytes(1_000)])
    }

    @Test("A send of several SDUs delivers each as its last frame crosses, four frames per connection event")
    func severalSDUs() throws {
        var (harness, link, channel) = try Self.channel()
        let start = harness.world.now
        // 5,000 bytes: SDUs of 2,048, 2,048 and 904 bytes, in 9 + 9 + 4 K-frames.
        let send = harness.perform(.sendL2CAP(channel: channel, from: .peripheral, testBytes(5_000)))
        #expect(
            Self.events(harness, link, since: start, naming: [send: "sent"]) == [
                .init("central got 2048", at: ms(90)), .init("central got 2048", at: ms(150)),
                .init("central got 904", at: ms(180)), .init("sent", at: ms(180)),
            ])
    }

    @Test("A send on a channel whose link dropped fails with notConnected, and the drop closes the channel")
    func linkDrops() throws {
        var (harness, link, channel) = try Self.channel()
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        #expect(
            harness.timeline.contains {
                if case .channelClosed(channel) = $0.effect { return true }
                return false
            })
        let send = harness.perform(.sendL2CAP(channel: channel, from: .central, Data([1])))
        #expect(harness.error(of: send) as? CoreBluetoothError == CoreBluetoothError(.notConnected))
    }

    @Test("Unpublishing a PSM closes the peripheral's channels on it in the order they opened, and no other")
    func unpublishingClosesTheChannelsOnThePSM() throws {
        var (harness, link, first) = try Self.channel()
        let otherPSM = try harness.mutate {
            try $0.publishL2CAPChannel(peripheral: link.peripheral, requiresEncryption: false)
        }
        var opened: [UInt64] = []
        for psm: UInt16 in [0x0080, otherPSM] {
            let open = harness.perform(.openL2CAP(central: link.central, peripheral: link.peripheral, psm: psm))
            guard case .channel(let channel) = harness.reply(of: open) else {
                Issue.record("no channel: \(String(describing: harness.completions[open]))")
                throw CoreBluetoothError(.unknown)
            }
            opened.append(channel)
        }
        let (second, onOtherPSM) = (opened[0], opened[1])
        let before = harness.timeline.count
        try harness.mutate { try $0.unpublishL2CAPChannel(peripheral: link.peripheral, psm: 0x0080) }
        let closed = harness.timeline.dropFirst(before).compactMap { happening -> UInt64? in
            if case .channelClosed(let channel) = happening.effect { return channel }
            return nil
        }
        #expect(closed == [first, second])
        #expect(Array(harness.world.channels.keys) == [onOtherPSM])
        #expect(
            harness.log(.l2cap).compactMap(\.detail).suffix(3) == [
                "unpublished 0x0080", "closed #\(first)", "closed #\(second)",
            ])
        for channel in [first, second] {
            let send = harness.perform(.sendL2CAP(channel: channel, from: .peripheral, Data([1])))
            #expect(harness.error(of: send) as? CoreBluetoothError == CoreBluetoothError(.notConnected))
        }
        let send = harness.perform(.sendL2CAP(channel: onOtherPSM, from: .peripheral, Data([1])))
        #expect(harness.error(of: send) == nil)
        #expect(harness.completions[send] != nil)
    }

    /// How a channel comes to close while a send on it is crossing.
    enum Closing: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// An end closes it (the world does not tell the ends' `close()` apart).
        case closed
        /// The peripheral unpublishes its PSM.
        case unpublished

        var testDescription: String { rawValue }
    }

    /// The lengths of the SDUs that reached `end`'s stream on `channel` since timeline entry `start`.
    static func arrivals(
        _ harness: WorldHarness, on channel: UInt64, at end: L2CAPChannelRecord.End, since start: Int = 0
    ) -> [Int] {
        harness.timeline.dropFirst(start).compactMap { happening -> Int? in
            if case .channelData(channel, end, let data) = happening.effect { return data.count }
            return nil
        }
    }

    @Test(
        "A send still crossing when its channel closes fails with notConnected, and its other bytes reach no stream",
        arguments: [LinkTiming.instant, WorldHarness.steadyTiming], Closing.allCases)
    func aSendCrossingWhenItsChannelClosesFails(timing: LinkTiming, closing: Closing) throws {
        for sender in [L2CAPChannelRecord.End.central, .peripheral] {
            var (harness, link, channel) = try Self.channel(timing: timing)
            let receiver: L2CAPChannelRecord.End = sender == .central ? .peripheral : .central
            // 5,000 bytes: SDUs of 2,048, 2,048 and 904 bytes, in 9 + 9 + 4 K-frames.
            let send = harness.start(.sendL2CAP(channel: channel, from: sender, testBytes(5_000)))
            if timing == WorldHarness.steadyTiming {
                // Four frames cross per connection event: the first SDU arrives at the third.
                while Self.arrivals(harness, on: channel, at: receiver).isEmpty, harness.runNextEvent() {}
                #expect(Self.arrivals(harness, on: channel, at: receiver) == [2_048])
            } else {
                // With instant timing the frames cross at the connection event due now, which
                // has not run yet: nothing has arrived.
                #expect(Self.arrivals(harness, on: channel, at: receiver).isEmpty)
            }
            #expect(harness.completions[send] == nil)
            let closedAt = harness.timeline.count
            switch closing {
            case .closed: harness.mutate { $0.closeChannel(channel) }
            case .unpublished:
                try harness.mutate { try $0.unpublishL2CAPChannel(peripheral: link.peripheral, psm: 0x0080) }
            }
            #expect(
                harness.error(of: send) as? CoreBluetoothError == CoreBluetoothError(.notConnected),
                "\(sender) sending")
            harness.runUntilIdle()
            // The rest of the frames still cross (the controller had them), but reach no stream
            // and do not complete the send a second time (the harness records that as an issue).
            #expect(Self.arrivals(harness, on: channel, at: receiver, since: closedAt).isEmpty)
            #expect(harness.world.pending[send] == nil)
            #expect(harness.world.pending.isEmpty)
        }
    }

    @Test(
        "A send still crossing when its link drops fails with the link's error, not notConnected",
        arguments: [LinkTiming.instant, WorldHarness.steadyTiming])
    func aSendCrossingWhenItsLinkDropsFailsWithTheLinksError(timing: LinkTiming) throws {
        var (harness, link, channel) = try Self.channel(timing: timing)
        let send = harness.start(.sendL2CAP(channel: channel, from: .central, testBytes(5_000)))
        let error = CoreBluetoothError(.connectionTimeout)
        harness.apply(.disconnect(central: link.central, peripheral: link.peripheral, error: error))
        #expect(harness.error(of: send) as? CoreBluetoothError == error)
        #expect(harness.world.channels.isEmpty)
        harness.runUntilIdle()
        #expect(Self.arrivals(harness, on: channel, at: .peripheral).isEmpty)
    }

    @Test(
        "A send whose bytes all arrived before its channel closed succeeds",
        arguments: [LinkTiming.instant, WorldHarness.steadyTiming], Closing.allCases)
    func aSendThatArrivedBeforeTheCloseSucceeds(timing: LinkTiming, closing: Closing) throws {
        var (harness, link, channel) = try Self.channel(timing: timing)
        let send = harness.perform(.sendL2CAP(channel: channel, from: .peripheral, testBytes(5_000)))
        #expect(harness.completions[send] != nil)
        #expect(harness.error(of: send) == nil)
        switch closing {
        case .closed: harness.mutate { $0.closeChannel(channel) }
        case .unpublished:
            try harness.mutate { try $0.unpublishL2CAPChannel(peripheral: link.peripheral, psm: 0x0080) }
        }
        harness.runUntilIdle()
        #expect(harness.error(of: send) == nil)
        #expect(Self.arrivals(harness, on: channel, at: .central) == [2_048, 2_048, 904])
    }

    @Test("An SDU is at most the channel MTU and its K-frames at most the MPS, the first two bytes shorter")
    func segmentation() {
        // The first K-frame of an SDU carries the 2-byte SDU length: 245 bytes, then 247.
        #expect(L2CAPChannelRecord.frames(sduLength: 1) == 1)
        #expect(L2CAPChannelRecord.frames(sduLength: 245) == 1)
        #expect(L2CAPChannelRecord.frames(sduLength: 246) == 2)
        #expect(L2CAPChannelRecord.frames(sduLength: 492) == 2)
        #expect(L2CAPChannelRecord.frames(sduLength: 493) == 3)
        #expect(L2CAPChannelRecord.frames(sduLength: 2_048) == 9)
        let (sdus, frames) = L2CAPChannelRecord.segment(testBytes(2_049))
        #expect(sdus.map(\.count) == [2_048, 1])
        #expect(frames == 10)
        #expect(sdus.reduce(Data(), +) == testBytes(2_049))
        let empty = L2CAPChannelRecord.segment(Data())
        #expect(empty.sdus.isEmpty && empty.frames == 0)
    }
}
