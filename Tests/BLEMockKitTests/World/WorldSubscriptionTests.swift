import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: subscriptions", .timeLimit(.minutes(10)))
struct WorldSubscriptionTests {
    static let mtu = 517

    @Test("A second subscribe to the same characteristic succeeds and delivers no second subscribed event")
    func subscribingTwice() throws {
        var (harness, link) = try WorldLink.make()
        let pdus = harness.world.attPDUCount
        let first = harness.perform(link.subscribe(WorldUUID.notifying))
        let second = harness.perform(link.subscribe(WorldUUID.notifying))
        #expect([harness.reply(of: first), harness.reply(of: second)] == [.done, .done])
        #expect(harness.world.attPDUCount - pdus == 4)  // both CCCD writes cross
        #expect(
            harness.peripheralEvents(link.peripheral) == [
                .subscribed(link.remoteCentral(mtu: Self.mtu), link.local(WorldUUID.notifying))
            ])
        #expect(harness.log(.subscribe).map(\.detail) == ["notify"])
        #expect(
            harness.world.subscribedCentrals(
                peripheral: link.peripheral, characteristic: link.local(WorldUUID.notifying))
                == [link.remoteCentral(mtu: Self.mtu)])
    }

    @Test("Subscribing to an indicating characteristic enables indications, and its CCCD reads 02 00")
    func indications() throws {
        var (harness, link) = try WorldLink.make()
        try harness.subscribe(WorldUUID.indicating, on: link)
        #expect(harness.log(.subscribe).map(\.detail) == ["indicate"])
        let descriptors = harness.perform(link.request(.discoverDescriptors(link.remote(WorldUUID.indicating))))
        let cccd = try #require(harness.descriptors(of: descriptors)?.first)
        let read = harness.perform(link.request(.readDescriptor(cccd)))
        #expect(harness.reply(of: read) == .value(Data([0x02, 0x00])))
    }

    @Test("Unsubscribing delivers one unsubscribed event and stops the updates")
    func unsubscribing() throws {
        var (harness, link) = try WorldLink.make()
        try harness.subscribe(WorldUUID.notifying, on: link)
        let off = harness.perform(link.subscribe(WorldUUID.notifying, false))
        let again = harness.perform(link.subscribe(WorldUUID.notifying, false))
        #expect([harness.reply(of: off), harness.reply(of: again)] == [.done, .done])
        let central = link.remoteCentral(mtu: Self.mtu)
        let characteristic = link.local(WorldUUID.notifying)
        #expect(
            harness.peripheralEvents(link.peripheral) == [
                .subscribed(central, characteristic), .unsubscribed(central, characteristic),
            ])
        // Nobody subscribes: the update is accepted and reaches no one.
        let sent = try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        #expect(sent)
        harness.runUntilIdle()
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
        #expect(harness.log(.notification).isEmpty)
    }

    @Test("A disconnect unsubscribes the central from everything it subscribed to, in handle order")
    func disconnectUnsubscribes() throws {
        var (harness, link) = try WorldLink.make()
        try harness.subscribe(WorldUUID.indicating, on: link)
        try harness.subscribe(WorldUUID.notifying, on: link)
        let central = link.remoteCentral(mtu: Self.mtu)
        let notifying = link.local(WorldUUID.notifying)
        let indicating = link.local(WorldUUID.indicating)
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral,
                error: CoreBluetoothError(.peripheralDisconnected)))
        #expect(
            harness.peripheralEvents(link.peripheral) == [
                .subscribed(central, indicating), .subscribed(central, notifying),
                .unsubscribed(central, notifying), .unsubscribed(central, indicating),
            ])
        #expect(harness.log(.unsubscribe).map(\.detail) == ["disconnected", "disconnected"])
        #expect(harness.log(.unsubscribe).map(\.handle) == [notifying.handle, indicating.handle])
        #expect(harness.world.subscribedCentrals(peripheral: link.peripheral, characteristic: notifying).isEmpty)
    }

    @Test("Subscriptions are per central: one central's subscription does not send to another")
    func perCentral() throws {
        var (harness, link) = try WorldLink.make()
        let other = harness.addCentral()
        let otherLink = try WorldLink.connect(other, to: link.peripheral, service: link.service, in: &harness)
        try harness.subscribe(WorldUUID.notifying, on: otherLink)
        let sent = try harness.updateValue(Data([9]), of: WorldUUID.notifying, on: link)
        #expect(sent)
        harness.runUntilIdle()
        #expect(harness.centralEvents(other).updatedValues == [Data([9])])
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
    }

    @Test("An update reaches every subscribed central in the centrals' order, or only the centrals it names")
    func updateReachesSubscribersInOrder() throws {
        var (harness, link) = try WorldLink.make()
        // The second central connects, drops its link, and connects again after the third: the
        // links' slots are in an order other than the centrals' own.
        let second = harness.addCentral()
        let third = harness.addCentral()
        _ = try WorldLink.connect(second, to: link.peripheral, service: link.service, in: &harness)
        harness.apply(
            .disconnect(
                central: second, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        let thirdLink = try WorldLink.connect(third, to: link.peripheral, service: link.service, in: &harness)
        let secondLink = try WorldLink.connect(second, to: link.peripheral, service: link.service, in: &harness)
        #expect(
            try #require(harness.world.links.position(of: thirdLink.key))
                < #require(harness.world.links.position(of: secondLink.key)))
        // The first link does not subscribe: the update skips it.
        for subscriber in [thirdLink, secondLink] { try harness.subscribe(WorldUUID.notifying, on: subscriber) }
        let subscribers = [second, third]
        let ordered = subscribers.sorted { $0.precedes($1) }

        #expect(try harness.updateValue(Data([7]), of: WorldUUID.notifying, on: link))
        harness.runUntilIdle()
        #expect(harness.log(.notification).compactMap(\.central) == ordered)
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
        for central in subscribers { #expect(harness.centralEvents(central).updatedValues == [Data([7])]) }

        let named = try #require(ordered.last)
        let sent = try harness.mutate {
            try $0.updateValue(
                peripheral: link.peripheral, value: Data([8]), characteristic: link.local(WorldUUID.notifying),
                centrals: [named, link.central])
        }
        #expect(sent)
        harness.runUntilIdle()
        #expect(harness.log(.notification).compactMap(\.central) == ordered + [named])
        #expect(harness.centralEvents(named).updatedValues == [Data([7]), Data([8])])
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
    }
}
