import BLECore
import BLEMockKit
import Foundation
import Transport

extension ChaosRun {
    /// Ends the chaos and checks the invariants: views agree, Transport accounted for every
    /// message, and the bridge finishes clean.
    func settleAndCheck() async {
        // Every fault scheduled so far fires, and so does its recovery: power and range come back.
        await bridge.advance(by: .seconds(10))
        steps.append("\(await bridge.now) settled")
        await checkViewsAgree()
        var received: [Int: (messages: [[UInt8]], failures: [MessageChannelFailure])] = [:]
        for index in peers.indices where peers[index].isMessenger {
            received[index] = await flush(index)
        }
        let log = await bridge.log
        for (index, outcome) in received.sorted(by: { $0.key < $1.key }) {
            checkMessages(of: index, delivered: outcome.messages, failures: outcome.failures, log: log)
        }
        let report = await bridge.finish()
        if case .leftovers(let items) = report {
            for item in items where !isExcused(item) { fail("finish() reported: \(item)") }
        }
    }

    /// The central's and each peripheral's views of links and subscriptions agree.
    func checkViewsAgree() async {
        let log = await bridge.log
        for (index, peer) in peers.enumerated() {
            let connected = await central.isConnected(peer.identifier)
            let seenByPeripheral = await peer.manager.maximumUpdateValueLength(for: central.identifier) != nil
            if connected != seenByPeripheral {
                fail("\(name(index)): the central says connected \(connected), the peripheral \(seenByPeripheral)")
            }
            let subscribed = await peer.manager.subscribedCentrals(for: peer.notifying)
                .contains { $0.identifier == central.identifier }
            if subscribed, !connected { fail("\(name(index)) lists the central as subscribed without a link") }
            if subscribed, subscriptions[peer.identifier] == nil {
                fail("\(name(index)) lists the central as subscribed, but the central unsubscribed or never subscribed")
            }
            if let since = subscriptions[peer.identifier], connected, !subscribed,
                !disconnected(peer.identifier, after: since, in: log)
            {
                fail("\(name(index)): the central subscribed at log \(since) on a link still up, the peripheral forgot")
            }
        }
    }

    /// Whether the bridge log records a disconnect of `peripheral` from the central at or
    /// after `index`.
    func disconnected(_ peripheral: UUID, after index: Int, in log: [BridgeLogEntry]) -> Bool {
        log[min(index, log.count)...].contains {
            $0.kind == .disconnected && $0.peripheral == peripheral && $0.central == central.identifier
        }
    }

    /// Reconnects a messenger and sends a sentinel each way, so that both channels have
    /// handled everything sent before; then closes both and returns what the receivers got.
    func flush(_ index: Int) async -> (messages: [[UInt8]], failures: [MessageChannelFailure]) {
        let id = peers[index].identifier
        let sentinel: [UInt8] = [0x5E, 0x17, UInt8(index)]
        var reached = false
        var lastError = "none"
        for _ in 0..<12 where !reached {
            do {
                if !(await central.isConnected(id)) {
                    try await central.connect(id, options: ConnectOptions(timeout: .seconds(2)))
                }
                _ = try await discover(index)
                let logIndex = await bridge.log.count
                try await central.setNotifyValue(true, for: peers[index].remote[Self.messageCharacteristic]!)
                subscriptions[id] = logIndex
                try await peers[index].centralChannel!.send(sentinel)
                try await peers[index].peripheralChannel!.send(sentinel, to: central.identifier)
                await bridge.advance(by: .seconds(1))
                reached = true
            } catch {
                lastError = "\(error)"
                await bridge.advance(by: .milliseconds(100))
            }
        }
        guard reached else {
            fail("\(name(index)) could not be reached again after the chaos (last error: \(lastError))")
            return ([], [])
        }
        var delivered: [[UInt8]] = []
        for await message in peers[index].centralChannel!.messages() {
            if message == sentinel { break }
            delivered.append(message)
        }
        let peripheralChannel = peers[index].peripheralChannel!
        let centralChannel = peers[index].centralChannel!
        await centralChannel.close()
        await peripheralChannel.close()
        await centralChannel.untilStopped()
        await peripheralChannel.untilStopped()
        delivered += await remaining(centralChannel.messages()).filter { $0 != sentinel }
        delivered += await remaining(peripheralChannel.messages()).map(\.bytes).filter { $0 != sentinel }
        let failures = await remaining(centralChannel.failures()) + remaining(peripheralChannel.failures())
        steps.append("\(await bridge.now) flushed \(name(index)): \(delivered.count) delivered, \(failures)")
        return (delivered, failures)
    }

    /// Every delivered message was sent, intact, and delivered once; every completed send was
    /// delivered, unless the link dropped after it began or the receiver reported a loss.
    func checkMessages(
        of index: Int, delivered: [[UInt8]], failures: [MessageChannelFailure], log: [BridgeLogEntry]
    ) {
        let peer = peers[index].identifier
        var deliveries: [[UInt8]: Int] = [:]
        for message in delivered { deliveries[message, default: 0] += 1 }
        let ours = sent.filter { $0.peer == peer }
        for (message, count) in deliveries {
            guard ours.contains(where: { $0.bytes == message }) else {
                fail("\(name(index)): a \(message.count)-byte message was delivered that was never sent intact")
                continue
            }
            if count > 1 { fail("\(name(index)): message \(serial(message)) was delivered \(count) times") }
        }
        var unexplained = 0
        for message in ours where message.completed && deliveries[message.bytes] == nil {
            if !disconnected(peer, after: message.logIndex, in: log) { unexplained += 1 }
        }
        if unexplained > failures.count {
            fail(
                "\(name(index)): \(unexplained) completed messages were neither delivered nor lost to a disconnect, "
                    + "and only \(failures.count) losses were reported")
        }
    }

    /// A finish() leftover the run expects: an injection that never fired, the seed line, or a
    /// write without response dropped by a full queue (the run's write bursts ignore
    /// `canSendWriteWithoutResponse` on purpose).
    func isExcused(_ item: Leftover) -> Bool {
        switch item {
        case .unfiredInjection(let injection, _): injections.contains { injection.description.hasPrefix($0) }
        case .seed: true
        case .misuse(let misuse): misuse.kind == .writeWithoutResponseDropped
        default: false
        }
    }

    /// The serial number a message carries in bytes 1 and 2.
    func serial(_ message: [UInt8]) -> Int {
        message.count >= 3 ? Int(message[1]) << 8 | Int(message[2]) : -1
    }

    /// Every element of a finished stream.
    func remaining<Element>(_ stream: AsyncStream<Element>) async -> [Element] {
        var elements: [Element] = []
        for await element in stream { elements.append(element) }
        return elements
    }
}
