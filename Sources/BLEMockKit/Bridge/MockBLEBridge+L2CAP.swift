import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The LE dynamic PSM range (Bluetooth Core Specification, Vol 3, Part A, 4.22).
    static let dynamicPSMs: ClosedRange<UInt16> = 0x0080...0x00FF

    // MARK: Publishing

    func publishL2CAPChannel(peripheral: UUID, requiresEncryption: Bool) throws -> UInt16 {
        try requirePoweredOn(peripheral: peripheral, "publishL2CAPChannel")
        let published = world.peripherals[peripheral]!.publishedPSMs
        guard let psm = Self.dynamicPSMs.first(where: { published[$0] == nil }) else {
            let error = L2CAPError(.noResourcesAvailable)
            world.record(.l2cap, peripheral: peripheral, error: error, detail: "publish")
            throw error
        }
        world.peripherals[peripheral]!.publishedPSMs[psm] = requiresEncryption
        world.record(
            .l2cap, peripheral: peripheral,
            detail: "published \(Self.hex(psm))" + (requiresEncryption ? " (encryption required)" : ""))
        return psm
    }

    func unpublishL2CAPChannel(peripheral: UUID, psm: UInt16) throws {
        try requirePoweredOn(peripheral: peripheral, "unpublishL2CAPChannel")
        guard world.peripherals[peripheral]!.publishedPSMs.removeValue(forKey: psm) != nil else {
            throw L2CAPError(.psmNotSupported)
        }
        world.record(.l2cap, peripheral: peripheral, detail: "unpublished \(Self.hex(psm))")
    }

    // MARK: Opening

    /// Opens a channel: one connection event for the request and response; a PSM that needs
    /// encryption on a plain link pairs first when the central pairs automatically, else is
    /// refused with the result the specification gives.
    func openL2CAPChannel(central: UUID, peripheral: UUID, psm: UInt16) async throws -> L2CAPChannel {
        _ = try requireLink(central: central, peripheral: peripheral, "openL2CAPChannel")
        let key = LinkKey(central: central, peripheral: peripheral)
        if world.peripherals[peripheral]?.publishedPSMs[psm] == true,
            let refusal = world.links[key]?.security.encryptionError
        {
            try await pairForAccess(key, refusalCost: world.connectionEvent(on: key)) { Self.l2capError(for: refusal) }
        }
        let cost = world.connectionEvent(on: key)
        return try await perform(.operation("openL2CAPChannel"), on: key, cost: cost) {
            guard let requiresEncryption = self.world.peripherals[peripheral]?.publishedPSMs[psm] else {
                let error = L2CAPError(.psmNotSupported)
                self.world.record(
                    .l2cap, central: central, peripheral: peripheral, error: error, detail: "open \(Self.hex(psm))")
                throw error
            }
            if requiresEncryption, let refusal = self.world.links[key]?.security.encryptionError {
                let error = Self.l2capError(for: refusal)
                self.world.record(
                    .l2cap, central: central, peripheral: peripheral, error: error, detail: "open \(Self.hex(psm))")
                throw error
            }
            return self.makeChannel(key, psm: psm)
        }
    }

    /// Creates both ends of a channel; the peripheral's end goes to its manager as an event.
    private func makeChannel(_ key: LinkKey, psm: UInt16) -> L2CAPChannel {
        let id = world.nextL2CAPChannelID
        world.nextL2CAPChannelID += 1
        let (toCentralStream, toCentral) = AsyncStream<Data>.makeStream()
        let (toPeripheralStream, toPeripheral) = AsyncStream<Data>.makeStream()
        world.l2capChannels[id] = L2CAPChannelRecord(
            link: key, psm: psm, toCentral: toCentral, toPeripheral: toPeripheral)
        let mtu = L2CAPChannelRecord.mtu
        let centralEnd = L2CAPChannel(
            psm: psm, peer: key.peripheral, id: id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(bridge: self, channel: id, end: .central, incoming: toCentralStream))
        let peripheralEnd = L2CAPChannel(
            psm: psm, peer: key.central, id: id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(bridge: self, channel: id, end: .peripheral, incoming: toPeripheralStream))
        world.record(.l2cap, central: key.central, peripheral: key.peripheral, detail: "opened \(Self.hex(psm)) #\(id)")
        world.peripherals[key.peripheral]?.events.yield(.l2capChannelOpened(peripheralEnd))
        return centralEnd
    }

    // MARK: Data

    /// Sends bytes over a channel: cut into SDUs of at most the channel MTU, each into
    /// K-frames of at most the MPS. In realistic mode each connection event carries as many
    /// K-frames as the link and the receiver's credits allow (credits return once the frames
    /// are delivered), so the bytes arrive after that many connection events; in fast mode at
    /// once. If the link drops first, the send fails with the link's error.
    func sendL2CAP(_ data: Data, channel: UInt64, from end: L2CAPChannelRecord.End) async throws {
        guard let record = world.l2capChannels[channel] else { throw CoreBluetoothError(.notConnected) }
        guard !data.isEmpty else { return }
        let (sdus, frames) = L2CAPChannelRecord.segment(data)
        let perEvent = max(1, min(world.timing.packetsPerConnectionEvent, L2CAPChannelRecord.initialCredits))
        var cost = Duration.zero
        for _ in 0..<((frames + perEvent - 1) / perEvent) { cost += world.connectionEvent(on: record.link) }
        try await perform(.operation("L2CAP send"), on: record.link, cost: cost) {
            guard let record = self.world.l2capChannels[channel] else { throw CoreBluetoothError(.notConnected) }
            let target = end == .central ? record.toPeripheral : record.toCentral
            for sdu in sdus { target.yield(sdu) }
            self.world.record(
                .l2cap, central: record.link.central, peripheral: record.link.peripheral, value: data,
                detail:
                    "\(end == .central ? "central" : "peripheral") sent \(data.count) bytes in \(frames) K-frames on #\(channel)"
            )
        }
    }

    // MARK: Closing

    func closeL2CAPChannel(_ channel: UInt64) {
        guard let record = world.l2capChannels.removeValue(forKey: channel) else { return }
        record.finish()
        world.record(
            .l2cap, central: record.link.central, peripheral: record.link.peripheral, detail: "closed #\(channel)")
    }

    /// A link went down: its channels close.
    func closeL2CAPChannels(on key: LinkKey) {
        for id in world.l2capChannels.keys.sorted() where world.l2capChannels[id]!.link == key {
            closeL2CAPChannel(id)
        }
    }

    /// The L2CAP connection result matching an ATT encryption refusal.
    static func l2capError(for refusal: ATTError) -> L2CAPError {
        L2CAPError(refusal.code == .insufficientAuthentication ? .insufficientAuthentication : .insufficientEncryption)
    }

    static func hex(_ psm: UInt16) -> String {
        let digits = String(psm, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
