import BLECore
import BLEMockKit
import Foundation
import Testing

extension WatchCompanionApp {
    /// The long session: a file from the watch in notifications of `fileData`, broken by a
    /// link loss and resumed after reconnecting (the app writes how much it has to `command`
    /// before it subscribes again), then an upload in writes without response that waits for
    /// room in the queue, a commit written with response, and the app disconnects.
    ///
    /// - Returns: the file as received.
    mutating func transferSession(fileLength: Int, upload: Data) async throws -> Data {
        let id = try await connect()
        var received = Data()
        try await resume(id, from: received.count)
        while received.count < fileLength {
            switch try await next(where: { _ in true }) {
            case .valueUpdated(let characteristic, let value) where characteristic.uuid == Self.fileData:
                received += value
            case .disconnected(let peripheral, _) where peripheral.identifier == id:
                try await central.connect(id, options: ConnectOptions())
                try await resume(id, from: received.count)
            default:
                break
            }
        }
        let data = try await central.characteristic(Self.fileData, of: id)
        let chunk = try await central.maximumWriteValueLength(for: id, type: .withoutResponse)
        var sent = 0
        while sent < upload.count {
            guard await central.canSendWriteWithoutResponse(to: id) else {
                _ = try await next {
                    if case .readyToSendWriteWithoutResponse = $0 { return true }
                    return false
                }
                continue
            }
            let part = upload[sent..<min(sent + chunk, upload.count)]
            try await central.writeValue(Data(part), for: data, type: .withoutResponse)
            sent += part.count
        }
        try await central.writeValue(
            Data([0x02]), for: central.characteristic(Self.command, of: id), type: .withResponse)
        try await central.cancelPeripheralConnection(id)
        return received
    }

    /// Discovers, tells the watch where to resume, and subscribes to the file's data.
    private func resume(_ id: UUID, from offset: Int) async throws {
        try await central.discoverAll(for: id)
        let position = withUnsafeBytes(of: UInt32(offset).littleEndian) { Data($0) }
        try await central.writeValue(
            position, for: central.characteristic(Self.command, of: id), type: .withResponse)
        try await central.setNotifyValue(true, for: central.characteristic(Self.fileData, of: id))
    }
}

/// The watch's side of the transfer: whenever a central subscribes to `fileData`, it sends
/// the file from the offset the central last wrote to `command`, in notifications as long as
/// the link allows, waiting when its queue is full; after `dropAfter` bytes of the first
/// connection it drops the link once.
struct WatchFirmware {
    let watch: LoadedPeripheral
    let file: Data
    let dropAfter: Int

    func serve() async throws {
        let manager = watch.manager
        let data = try #require(try watch.characteristic(uuid: WatchCompanionApp.fileData))
        let command = try #require(try watch.characteristic(uuid: WatchCompanionApp.command))
        var events = manager.events().makeAsyncIterator()
        var dropped = false
        while let event = await events.next() {
            guard case .subscribed(let central, let characteristic) = event, characteristic.handle == data.handle else {
                continue
            }
            let position = await manager.value(of: command) ?? Data()
            var offset = position.count == 4 ? Int(position.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }) : 0
            while offset < file.count {
                if !dropped, offset >= dropAfter {
                    dropped = true
                    await manager.simulateDisconnection(of: central.identifier)
                    break
                }
                let part = file[offset..<min(offset + central.maximumUpdateValueLength, file.count)]
                if try await manager.updateValue(Data(part), for: data, onSubscribedCentrals: nil) {
                    offset += part.count
                    continue
                }
                while let next = await events.next() {
                    if case .readyToUpdateSubscribers = next { break }
                }
            }
            if offset >= file.count { return }
        }
    }
}
