import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// L2CAP connection-oriented channels: a peripheral publishes a PSM from the dynamic range;
/// a central's connection request and the peripheral's response cross the link's pipes, as
/// do the K-frames of each SDU (SDUs of at most the channel MTU, frames of at most the MPS).
extension World {
    // MARK: Publishing

    mutating func publishL2CAPChannel(peripheral: UUID, requiresEncryption: Bool) throws -> UInt16 {
        try requirePoweredOn(peripheral: peripheral, "publishL2CAPChannel")
        if let error = injection(.l2capPublish, peripheral: peripheral)?.error {
            record(.l2cap, peripheral: peripheral, error: error, detail: "publish")
            throw error
        }
        let published = peripherals[existing: peripheral].publishedPSMs
        guard let psm = L2CAPChannelRecord.dynamicPSMs.first(where: { published[$0] == nil }) else {
            let error = L2CAPError(.noResourcesAvailable)
            record(.l2cap, peripheral: peripheral, error: error, detail: "publish")
            throw error
        }
        peripherals[peripheral]!.publishedPSMs[psm] = requiresEncryption
        record(
            .l2cap, peripheral: peripheral,
            detail: "published \(L2CAPChannelRecord.hex(psm))" + (requiresEncryption ? " (encryption required)" : ""))
        return psm
    }

    /// Stops accepting channels at `psm` and closes the peripheral's channels open on it, in
    /// the order they opened, as CoreBluetooth's `unpublishL2CAPChannel(_:)` "closes any
    /// existing L2CAP channels using this PSM": each end sees what it sees when the other
    /// closes the channel.
    mutating func unpublishL2CAPChannel(peripheral: UUID, psm: UInt16) throws {
        try requirePoweredOn(peripheral: peripheral, "unpublishL2CAPChannel")
        guard peripherals[peripheral]!.publishedPSMs.removeValue(forKey: psm) != nil else {
            throw APIMisuseError.l2capChannelNotPublished(psm: psm)
        }
        withdraw(psm: psm, of: peripheral)
    }

    /// Unpublishes every PSM of a peripheral, each as ``unpublishL2CAPChannel(peripheral:psm:)``
    /// does (closing the channels open on it), in PSM order: its Bluetooth fell below
    /// `poweredOff` (CoreBluetooth clears what the app published, as it clears its database), or
    /// its app was terminated (L2CAP is not part of state restoration).
    mutating func unpublishAllL2CAPChannels(peripheral: UUID) {
        guard let published = peripherals[peripheral]?.publishedPSMs, !published.isEmpty else { return }
        peripherals[peripheral]!.publishedPSMs = [:]
        for psm in published.keys.sorted() { withdraw(psm: psm, of: peripheral) }
    }

    /// Logs `psm` (no longer in the peripheral's published PSMs) as unpublished and closes the
    /// channels open on it, in the order they opened.
    private mutating func withdraw(psm: UInt16, of peripheral: UUID) {
        record(.l2cap, peripheral: peripheral, detail: "unpublished \(L2CAPChannelRecord.hex(psm))")
        let open = channels.values.filter { $0.link.peripheral == peripheral && $0.psm == psm }.map(\.id)
        for id in open.sorted() { closeChannel(id) }
    }

    // MARK: Opening

    /// Starts opening a channel: the connection request crosses to the peripheral, whose
    /// answer crosses back. A PSM outside the LE dynamic range is refused first, on the central
    /// (``requireDynamicPSM(_:central:peripheral:)``). A PSM that needs encryption on a plain
    /// link pairs first when the central pairs automatically, else is refused with the result
    /// the specification gives. An injected failure (``ErrorInjection/Operation/l2capOpen``) is
    /// drawn now and answers the request when it reaches the peripheral (given back if the
    /// request is withdrawn before it crosses: see ``cancel(_:)``).
    mutating func startOpeningChannel(central: UUID, peripheral: UUID, psm: UInt16, id: OperationID) {
        do {
            _ = try requireLink(central: central, peripheral: peripheral, "openL2CAPChannel")
            try requireDynamicPSM(psm, central: central, peripheral: peripheral)
        } catch {
            return complete(id, .failure(error))
        }
        let key = LinkKey(central: central, peripheral: peripheral)
        var operation = PendingOperation(
            id: id, owner: .central(central), kind: .openL2CAP(key, psm: psm), since: now, stage: .sent)
        if let fired = firedInjection(.l2capOpen, central: central, peripheral: peripheral) {
            operation.injected = fired.failure
            operation.injectedEntry = fired.entry
        }
        pending[id] = operation
        sendToPeripheral(.signal(id), on: key)
    }

    /// Checks that `psm` is in the LE dynamic range, where peripheral managers publish theirs.
    /// CoreBluetooth refuses any other itself, before anything goes on the air, with
    /// `invalidParameters` (`openL2CAPChannel(0x2349)` fails so: embassy-rs/trouble#371); the
    /// kit refuses the fixed, SIG-assigned range (0x0001–0x007F) the same way, as no peripheral
    /// manager can publish a PSM there.
    private mutating func requireDynamicPSM(_ psm: UInt16, central: UUID, peripheral: UUID) throws {
        guard !L2CAPChannelRecord.dynamicPSMs.contains(psm) else { return }
        let hex = L2CAPChannelRecord.hex(psm)
        let error = CoreBluetoothError(
            .invalidParameters,
            reason: "PSM \(hex) is outside the LE dynamic range 0x0080…0x00FF, where peripheral managers publish "
                + "theirs; open the PSM the peripheral published (publishL2CAPChannel returns it)")
        record(.refused, central: central, peripheral: peripheral, error: error, detail: "openL2CAPChannel(\(hex))")
        throw error
    }

    /// The connection request arrived at the peripheral.
    mutating func serveChannelRequest(_ id: OperationID, on key: LinkKey) {
        guard let position = pending.position(of: id),
            case .openL2CAP(_, let psm) = pending[at: position].kind
        else { return }
        if let injected = pending[at: position].injected {
            // Once: a request sent again after pairing is served as the peripheral would.
            pending.entries[position]!.injected = nil
            guard let error = injected.error else {
                // Swallowed: no answer comes, until the link drops or the caller gives up.
                pending.entries[position]!.stage = .neverAnswered
                return
            }
            // A refusal for want of security starts pairing, as the peripheral's own would.
            let refusal: ATTError? =
                switch injected {
                case .l2cap(.insufficientAuthentication): ATTError(.insufficientAuthentication)
                case .l2cap(.insufficientEncryption): ATTError(.insufficientEncryption)
                default: nil
                }
            return sendToCentral(.response(id, .channelRefused(error, encryption: refusal)), on: key)
        }
        guard let requiresEncryption = peripherals[key.peripheral]?.publishedPSMs[psm] else {
            return sendToCentral(.response(id, .channelRefused(L2CAPError(.psmNotSupported), encryption: nil)), on: key)
        }
        if requiresEncryption, let refusal = links[existing: key].security.encryptionError {
            let answer = ServerAnswer.channelRefused(L2CAPChannelRecord.error(for: refusal), encryption: refusal)
            return sendToCentral(.response(id, answer), on: key)
        }
        let channel = L2CAPChannelRecord(id: nextChannelID, link: key, psm: psm)
        nextChannelID += 1
        channels[channel.id] = channel
        record(
            .l2cap, central: key.central, peripheral: key.peripheral,
            detail: "opened \(L2CAPChannelRecord.hex(psm)) #\(channel.id)")
        effects.append(.channelOpened(channel, opener: id))
        sendToCentral(.response(id, .channel(channel.id)), on: key)
    }

    /// The peripheral's answer to a connection request arrived at the central.
    mutating func channelAnswered(_ id: OperationID, _ answer: ServerAnswer, on key: LinkKey) {
        guard let operation = pending[id], case .openL2CAP(_, let psm) = operation.kind else { return }
        switch answer {
        case .channel(let channel):
            if operation.isCancelled { closeChannel(channel) }
            complete(id, .success(.channel(channel)))
        case .channelRefused(let error, let refusal):
            if let refusal, !operation.isCancelled, startsPairing(for: id, after: refusal, on: key) {
                return startPairing(for: id, on: key, refusal: refusal)
            }
            record(
                .l2cap, central: key.central, peripheral: key.peripheral, error: error,
                detail: "open \(L2CAPChannelRecord.hex(psm))")
            complete(id, .failure(error))
        default:
            break
        }
    }

    // MARK: Data

    /// Sends bytes on a channel: cut into SDUs of at most the channel MTU, each into K-frames
    /// of at most the MPS, which cross with the link's other packets. The send ends when its
    /// last frame has crossed; if the channel closes first, it fails with `notConnected`, and if
    /// the link drops first, with the link's error (``closeChannel(_:failingSendsWith:)``).
    mutating func startSending(_ data: Data, channel: UInt64, from end: L2CAPChannelRecord.End, id: OperationID) {
        guard let record = channels[channel], links.contains(record.link) else {
            return complete(id, .failure(CoreBluetoothError(.notConnected)))
        }
        guard !data.isEmpty else { return complete(id, .success(.done)) }
        let (sdus, frames) = L2CAPChannelRecord.segment(data)
        let owner: Manager = end == .central ? .central(record.link.central) : .peripheral(record.link.peripheral)
        pending[id] = PendingOperation(
            id: id, owner: owner, kind: .sendL2CAP(record.link, channel: channel, frames: frames), since: now,
            stage: .sent)
        self.record(
            .l2cap, central: record.link.central, peripheral: record.link.peripheral, value: data,
            detail:
                "\(end == .central ? "central" : "peripheral") sent \(data.count) bytes in \(frames) K-frames on #\(channel)"
        )
        for (index, sdu) in sdus.enumerated() {
            let count = L2CAPChannelRecord.frames(sduLength: sdu.count)
            for frame in 0..<count {
                let lastOfSDU = frame == count - 1
                let packet = PDU.frame(
                    Frame(
                        channel: channel,
                        l2capBytes: L2CAPChannelRecord.frameBytes(frame, sduLength: sdu.count),
                        sdu: lastOfSDU ? sdu : nil,
                        completes: lastOfSDU && index == sdus.count - 1 ? id : nil))
                if end == .central {
                    links[record.link]!.toPeripheral.append(packet)
                } else {
                    links[record.link]!.toCentral.append(packet)
                }
            }
        }
        scheduleConnectionEvent(record.link)
    }

    /// A K-frame arrived at one end: a complete SDU goes to that end's stream.
    mutating func frameArrived(_ frame: Frame, at end: L2CAPChannelRecord.End) {
        if let sdu = frame.sdu, channels[frame.channel] != nil {
            effects.append(.channelData(frame.channel, to: end, sdu))
        }
        if let id = frame.completes, pending.contains(id) { complete(id, .success(.done)) }
    }

    // MARK: Closing

    /// Closes a channel at both ends. The bytes of its sends still crossing are lost: those
    /// sends fail with `error` (``CoreBluetoothError/Code/notConnected`` unless the link went
    /// down), and what of them crosses later reaches no stream.
    mutating func closeChannel(
        _ channel: UInt64, failingSendsWith error: CoreBluetoothError = CoreBluetoothError(.notConnected)
    ) {
        guard let record = channels.removeValue(forKey: channel) else { return }
        effects.append(.channelClosed(channel))
        self.record(
            .l2cap, central: record.link.central, peripheral: record.link.peripheral, detail: "closed #\(channel)")
        failOperations(error) { $0.isSend(on: channel) }
    }

    /// A link went down: its channels close, and their sends still crossing fail with the
    /// link's error (`error`), as the link's other operations do.
    mutating func closeChannels(on key: LinkKey, failingSendsWith error: CoreBluetoothError) {
        for id in channels.keys.sorted() where channels[id]!.link == key { closeChannel(id, failingSendsWith: error) }
    }
}
