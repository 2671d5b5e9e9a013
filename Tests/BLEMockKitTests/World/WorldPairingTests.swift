import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: pairing", .timeLimit(.minutes(10)))
struct WorldPairingTests {
    static func link(pairing: PairingBehavior) throws -> (WorldHarness, WorldLink) {
        var (harness, link) = try WorldLink.make(central: .init(pairing: pairing))
        try harness.setValue(Data([0x42]), of: WorldUUID.encrypted, on: link)
        return (harness, link)
    }

    @Test(
        "A read refused for want of authentication pairs for the configured time, then is sent again and succeeds",
        arguments: [500, 1_000])
    func pairingSucceeds(duration: Int) throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(duration), outcome: .succeeds))
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.reply(of: read) == .value(Data([0x42])))
        // The refused exchange, the pairing, and the exchange sent again.
        #expect(harness.elapsed(read, since: start) == ms(30 + duration + 30))
        #expect(harness.world.attPDUCount - pdus == 4)
        let paired = try #require(harness.log(.paired).first)
        #expect(start.duration(to: paired.time) == ms(30 + duration))
        #expect(paired.error == nil)
        #expect(harness.world.isBonded(link.key))
        #expect(harness.world.links[link.key]?.security == LinkSecurity(isEncrypted: true, serverHasKeys: true))
        // Encrypted now: the next read is one exchange.
        let again = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.elapsed(again, since: harness.completionTimes[read]!) == ms(30))
        #expect(harness.log(.paired).count == 1)
    }

    @Test(
        "A read or write cancelled while its link pairs is not sent again once the pairing succeeds; the bearer is free",
        arguments: ["read", "write"])
    func anAccessCancelledWhilePairingIsNotSent(_ access: String) throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        let pdus = harness.world.attPDUCount
        let id = harness.start(
            access == "read" ? link.read(WorldUUID.encrypted) : link.write(WorldUUID.encrypted, Data([7])))
        while harness.world.pending[id]?.stage != .pairing, harness.runNextEvent() {}
        #expect(harness.world.pending[id]?.stage == .pairing)
        harness.cancel(id)
        harness.runUntilIdle()
        // The pairing went on and bonded; the refused request and its error response are all
        // the access cost on the air, and its caller, gone, gets no completion.
        #expect(harness.log(.paired).map(\.error) == [nil])
        #expect(harness.world.isBonded(link.key))
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.world.pending[id] == nil)
        #expect(harness.completionTimes[id] == nil)
        // The bearer is free: the next read is one exchange, on the encrypted link.
        let next = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.reply(of: next) == .value(Data([0x42])))
    }

    @Test(
        "A long write refused at its first Prepare Write for want of encryption is cancelled before the link pairs",
        arguments: [PairingBehavior.Outcome.succeeds, .rejected, .timesOut])
    func aRefusedLongWriteIsCancelledBeforePairing(outcome: PairingBehavior.Outcome) throws {
        var (harness, link) = try WorldLink.make(
            central: .init(mtu: .fixed(23), pairing: .automatic(duration: ms(500), outcome: outcome)))
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        // 50 bytes at ATT_MTU 23: three Prepare Writes of 18 bytes and an Execute Write.
        let write = harness.perform(link.write(WorldUUID.encrypted, testBytes(50)))
        // The refused Prepare Write and the Execute Write (flags 0x00) cancelling it, as when
        // the central does not pair (Vol 3, Part F, 3.4.6.3), then the pairing.
        let paired = try #require(harness.log(.paired).first)
        #expect(start.duration(to: paired.time) == ms(30 + 30 + 500))
        switch outcome {
        case .succeeds:
            // Sent again whole on the encrypted link: 4 exchanges.
            #expect(harness.reply(of: write) == .done)
            #expect(harness.world.attPDUCount - pdus == 2 + 2 + 8)
            #expect(harness.elapsed(write, since: start) == ms(30 + 30 + 500 + 4 * 30))
            let read = harness.perform(link.read(WorldUUID.encrypted))
            #expect(harness.reply(of: read) == .value(testBytes(50)))
        case .rejected:
            #expect(harness.error(of: write) as? ATTError == ATTError(.insufficientAuthentication))
            #expect(harness.world.attPDUCount - pdus == 4)
        case .timesOut:
            #expect(harness.error(of: write) as? CoreBluetoothError == CoreBluetoothError(.encryptionTimedOut))
            #expect(harness.world.attPDUCount - pdus == 4)
        }
    }

    @Test("A rejected pairing fails the read with the peripheral's refusal, and leaves no bond")
    func pairingRejected() throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .rejected))
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientAuthentication))
        #expect(harness.elapsed(read, since: start) == ms(530))
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.log(.paired).map(\.error) == [.att(ATTError(.insufficientAuthentication))])
        #expect(!harness.world.isBonded(link.key))
        #expect(harness.world.links[link.key]?.security == LinkSecurity())
    }

    @Test("A pairing that times out fails the read with encryptionTimedOut")
    func pairingTimesOut() throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .timesOut))
        let start = harness.world.now
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? CoreBluetoothError == CoreBluetoothError(.encryptionTimedOut))
        #expect(harness.elapsed(read, since: start) == ms(530))
        #expect(harness.log(.paired).map(\.error) == [.coreBluetooth(CoreBluetoothError(.encryptionTimedOut))])
        #expect(!harness.world.isBonded(link.key))
    }

    @Test("A central that never pairs fails the read with insufficient authentication after one exchange")
    func neverPairs() throws {
        var (harness, link) = try Self.link(pairing: .never)
        let start = harness.world.now
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientAuthentication))
        #expect(harness.elapsed(read, since: start) == ms(30))
        #expect(harness.log(.paired).isEmpty)
    }

    @Test("A bond survives reconnection: the new link is encrypted as it comes up")
    func bondSurvivesReconnection() throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        harness.perform(link.read(WorldUUID.encrypted))
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        let connect = harness.perform(.connect(central: link.central, peripheral: link.peripheral, timeout: nil))
        #expect(harness.reply(of: connect) == .done)
        #expect(harness.world.links[link.key]?.security == LinkSecurity(isEncrypted: true, serverHasKeys: true))
    }

    @Test("When the peripheral removed its bond, reconnecting fails with peerRemovedPairingInformation")
    func peripheralRemovedBond() throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        harness.perform(link.read(WorldUUID.encrypted))
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        harness.mutate { $0.removeBond(link.key, onCentral: false) }
        let connect = harness.perform(.connect(central: link.central, peripheral: link.peripheral, timeout: nil))
        let error = CoreBluetoothError(.peerRemovedPairingInformation)
        #expect(harness.error(of: connect) as? CoreBluetoothError == error)
        #expect(harness.centralEvents(link.central).last == .failedToConnect(link.remotePeripheral, error))
        #expect(harness.world.links[link.key] == nil)
    }
    /// A pair bonded by a read, its link dropped, and the central's bond removed (the user's
    /// "Forget This Device"; the watch keeps its keys), with the central's pairing now
    /// `pairing`.
    static func centralForgot(then pairing: PairingBehavior) throws -> (WorldHarness, WorldLink) {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        harness.perform(link.read(WorldUUID.encrypted))
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        harness.mutate {
            $0.removeBond(link.key, onCentral: true)
            $0.centrals[link.central]!.configuration.pairing = pairing
        }
        let connect = harness.perform(.connect(central: link.central, peripheral: link.peripheral, timeout: nil))
        #expect(harness.reply(of: connect) == .done)
        // (A new link knows only what is discovered on it.)
        let services = harness.perform(
            .gatt(central: link.central, peripheral: link.peripheral, .discoverServices(nil)))
        let service = try #require(harness.services(of: services)?.first)
        harness.perform(
            .gatt(central: link.central, peripheral: link.peripheral, .discoverCharacteristics(service, nil)))
        return (harness, link)
    }

    @Test(
        "When the central forgot its bond and the peripheral kept its own, the new link is plain and an access needing encryption meets insufficient encryption (the server has keys)"
    )
    func centralForgotBondServerAnswersInsufficientEncryption() throws {
        var (harness, link) = try Self.centralForgot(then: .never)
        #expect(harness.world.links[link.key]?.security == LinkSecurity(serverHasKeys: true))
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientEncryption))
    }

    @Test(
        "When the central forgot its bond, a rejected pairing fails the access with the server's insufficient encryption"
    )
    func centralForgotBondRejectedPairing() throws {
        var (harness, link) = try Self.centralForgot(then: .automatic(duration: ms(500), outcome: .rejected))
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientEncryption))
        #expect(harness.log(.paired).last?.error == .att(ATTError(.insufficientEncryption)))
        #expect(!harness.world.isBonded(link.key))
    }

    @Test("When the central forgot its bond, pairing again bonds both sides and the access succeeds")
    func centralForgotBondPairsAgain() throws {
        var (harness, link) = try Self.centralForgot(then: .automatic(duration: ms(500), outcome: .succeeds))
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.reply(of: read) == .value(Data([0x42])))
        #expect(harness.world.isBonded(link.key))
        #expect(harness.world.links[link.key]?.security == LinkSecurity(isEncrypted: true, serverHasKeys: true))
    }

    @Test(
        "A peripheral that removes its bond during an encrypted link leaves the link encrypted, and the server has no keys from then on"
    )
    func peripheralRemovesBondOnALiveLink() throws {
        var (harness, link) = try Self.link(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        harness.perform(link.read(WorldUUID.encrypted))
        harness.mutate { $0.removeBond(link.key, onCentral: false) }
        #expect(harness.world.links[link.key]?.security == LinkSecurity(isEncrypted: true, serverHasKeys: false))
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.reply(of: read) == .value(Data([0x42])))
    }
    @Test(
        "An app terminated while a read it made waits on pairing hears the read cancelled once; the pairing ends for the system, which keeps the bond"
    )
    func terminatedWhilePairing() throws {
        var configuration = MockCentralManager.Configuration(pairing: .automatic(duration: ms(500), outcome: .succeeds))
        configuration.restoreIdentifier = "app.central"
        var (harness, link) = try WorldLink.make(central: configuration)
        try harness.setValue(Data([0x42]), of: WorldUUID.encrypted, on: link)
        let read = harness.start(link.read(WorldUUID.encrypted))
        // The refusal crosses and pairing starts; the app is terminated before it ends.
        harness.advance(to: harness.world.now.advanced(by: ms(100)))
        harness.mutate { $0.terminate(central: link.central) }
        #expect(harness.error(of: read) as? CoreBluetoothError == CoreBluetoothError(.operationCancelled))
        // (The harness records an issue should the read complete a second time.)
        let idle = harness.runUntilIdle()
        #expect(idle)
        #expect(harness.log(.paired).count == 1)
        #expect(harness.world.isBonded(link.key))
        #expect(harness.world.pending[read] == nil)
    }
}
