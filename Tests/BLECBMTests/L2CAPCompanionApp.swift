import BLECBM
import BLECore
import BLEMockKit
import Foundation

// A smartwatch companion app's file transfer over L2CAP, written as an iOS team writes it
// against CoreBluetooth: delegate callbacks, `StreamDelegate`, streams scheduled in the main run
// loop, a write loop driven by `.hasSpaceAvailable` that handles partial writes, a read loop on
// `.hasBytesAvailable`, the streams closed and unscheduled at their end, and the channel opened
// again after the link comes back. The phone sends a file (a 4-byte big-endian length, then the
// bytes); the watch stores it and answers with the file's 4-byte checksum.

/// A file's checksum, as both apps compute it (Adler-32).
func companionChecksum(_ data: Data) -> UInt32 {
    var (a, b): (UInt32, UInt32) = (1, 0)
    for byte in data {
        a = (a + UInt32(byte)) % 65_521
        b = (b + a) % 65_521
    }
    return b << 16 | a
}

extension Data {
    /// `value` as four big-endian bytes.
    init(bigEndian value: UInt32) {
        self.init([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) })
    }

    /// The four big-endian bytes at `offset` as a number.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(self[startIndex + offset + $1]) }
    }
}

/// The watch: publishes an L2CAP channel and advertises; on each channel it reads a file and
/// answers with its checksum (or, echoing, writes back every byte it reads).
final class WatchFileReceiver: NSObject, CBMPeripheralManagerDelegate, StreamDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMPeripheralManager!
    var psm: UInt16?
    var publishError: (any Error)?
    let echoes: Bool
    var channel: CBML2CAPChannel?
    var channelsOpened = 0
    /// The bytes of the current channel (header and file).
    var incoming = Data()
    /// The files received whole.
    var files: [Data] = []
    /// Bytes to write back, not yet taken by the output stream.
    var outbound = Data()
    var canWrite = false
    var events: [String] = []
    private var readBuffer = [UInt8](repeating: 0, count: 1_024)

    init(bridge: MockBLEBridge, echoes: Bool = false, configuration: MockPeripheralManager.Configuration? = nil) {
        self.echoes = echoes
        super.init()
        manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        events.append("state \(peripheral.state.rawValue)")
        guard peripheral.state == .poweredOn else { return }
        peripheral.publishL2CAPChannel(withEncryption: false)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: UInt16, error: (any Error)?)
    {
        publishError = error
        guard error == nil else { return }
        self.psm = psm
        peripheral.startAdvertising([CBMAdvertisementDataLocalNameKey: "Watch"])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        guard let channel else { return }
        closeStreams()
        self.channel = channel
        channelsOpened += 1
        incoming = Data()
        outbound = Data()
        canWrite = false
        for stream in [channel.inputStream!, channel.outputStream!] as [Stream] {
            stream.delegate = self
            stream.schedule(in: .main, forMode: .default)
            stream.open()
        }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        let side = aStream is InputStream ? "in" : "out"
        switch eventCode {
        case .openCompleted:
            events.append("\(side) open")
        case .hasBytesAvailable:
            readAvailable(from: aStream as! InputStream)
        case .hasSpaceAvailable:
            canWrite = true
            writeOutbound()
        case .endEncountered:
            events.append("\(side) end")
            closeStreams()
        case .errorOccurred:
            events.append("\(side) error \(String(describing: aStream.streamError))")
            closeStreams()
        default:
            break
        }
    }

    private func readAvailable(from input: InputStream) {
        while true {
            let count = input.read(&readBuffer, maxLength: readBuffer.count)
            guard count > 0 else { break }
            let bytes = Data(readBuffer[0..<count])
            if echoes {
                outbound.append(bytes)
                writeOutbound()
            } else {
                incoming.append(bytes)
            }
        }
        guard !echoes, incoming.count >= 4 else { return }
        let length = Int(incoming.bigEndianUInt32(at: 0))
        guard incoming.count == 4 + length else { return }
        let file = Data(incoming.dropFirst(4))
        files.append(file)
        incoming = Data()
        outbound.append(Data(bigEndian: companionChecksum(file)))
        writeOutbound()
    }

    /// Writes what it has while the stream takes bytes (from the callback, or when it has
    /// something new after the stream said it had room).
    private func writeOutbound() {
        guard canWrite, let output = channel?.outputStream else { return }
        while !outbound.isEmpty {
            let written = outbound.withUnsafeBytes {
                output.write($0.bindMemory(to: UInt8.self).baseAddress!, maxLength: $0.count)
            }
            if written < 0 {
                events.append("out write failed")
                return
            }
            if written == 0 {
                // Full: `.hasSpaceAvailable` comes again.
                canWrite = false
                return
            }
            outbound.removeFirst(written)
        }
    }

    func closeStreams() {
        guard let channel else { return }
        for stream in [channel.inputStream!, channel.outputStream!] as [Stream] {
            stream.close()
            stream.remove(from: .main, forMode: .default)
            stream.delegate = nil
        }
        self.channel = nil
    }
}

/// The phone: finds the watch, connects, opens the channel, sends its file in chunks as the
/// output stream has room, and reads the watch's checksum; after a disconnect it connects again
/// and sends the file again on a new channel.
final class PhoneFileSender: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, StreamDelegate,
    @unchecked Sendable
{
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var peripheral: CBMPeripheral?
    var psm: UInt16 = 0
    let file: Data
    /// The bytes one write offers at most.
    let chunkSize: Int
    /// How many times the app opens the channel again after a refusal.
    var openRetries = 0
    var reconnects = true
    /// Whether the app schedules its streams in `RunLoop.current` (its callbacks' thread's run
    /// loop: the main one on a device, for a manager on the main queue), not `RunLoop.main`.
    var schedulesInCurrentRunLoop = false
    var channel: CBML2CAPChannel?
    var channelsOpened = 0
    var openErrors: [any Error] = []
    var disconnections = 0
    /// What goes out on the current channel (header and file) and how much of it has.
    private var payload = Data()
    var sent = 0
    /// The counts `write` returned.
    var writeResults: [Int] = []
    var answer = Data()
    /// The checksums the watch answered with, one a transfer.
    var acknowledged: [UInt32] = []
    var events: [String] = []
    private var readBuffer = [UInt8](repeating: 0, count: 512)

    init(
        bridge: MockBLEBridge, file: Data, chunkSize: Int = 1_000,
        configuration: MockCentralManager.Configuration? = nil
    ) {
        self.file = file
        self.chunkSize = chunkSize
        super.init()
        manager = CBMCentralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    /// The file's checksum (the watch's answer once it has the file whole).
    lazy var checksum = companionChecksum(file)

    var isDone: Bool { !acknowledged.isEmpty && acknowledged.last == checksum }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        guard central.state == .poweredOn else { return }
        central.scanForPeripherals(withServices: nil)
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil, advertisementData[CBMAdvertisementDataLocalNameKey] as? String == "Watch" else {
            return
        }
        self.peripheral = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        events.append("connected")
        peripheral.openL2CAPChannel(psm)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        events.append("disconnected")
        disconnections += 1
        closeStreams()
        if reconnects { central.connect(peripheral) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        if let error {
            openErrors.append(error)
            events.append("open failed")
            if openRetries > 0 {
                openRetries -= 1
                peripheral.openL2CAPChannel(psm)
            }
            return
        }
        guard let channel else { return }
        events.append("channel open")
        self.channel = channel
        channelsOpened += 1
        payload = Data(bigEndian: UInt32(file.count)) + file
        sent = 0
        answer = Data()
        for stream in [channel.inputStream!, channel.outputStream!] as [Stream] {
            stream.delegate = self
            stream.schedule(in: schedulesInCurrentRunLoop ? .current : .main, forMode: .default)
            stream.open()
        }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        let side = aStream is InputStream ? "in" : "out"
        switch eventCode {
        case .openCompleted:
            events.append("\(side) open")
        case .hasSpaceAvailable:
            sendNextChunk()
        case .hasBytesAvailable:
            readAnswer(from: aStream as! InputStream)
        case .endEncountered:
            events.append("\(side) end")
            closeStreams()
        case .errorOccurred:
            events.append("\(side) error \(String(describing: aStream.streamError))")
            closeStreams()
        default:
            break
        }
    }

    /// One write a callback, as many apps do: the stream says again when it has room.
    func sendNextChunk() {
        guard let output = channel?.outputStream, sent < payload.count else { return }
        let length = min(chunkSize, payload.count - sent)
        let written = payload.withUnsafeBytes { bytes in
            output.write(bytes.bindMemory(to: UInt8.self).baseAddress! + sent, maxLength: length)
        }
        writeResults.append(written)
        if written < 0 {
            events.append("write failed")
            return
        }
        sent += written
    }

    private func readAnswer(from input: InputStream) {
        while true {
            let count = input.read(&readBuffer, maxLength: readBuffer.count)
            guard count > 0 else { break }
            answer.append(contentsOf: readBuffer[0..<count])
        }
        while answer.count >= 4 {
            acknowledged.append(answer.bigEndianUInt32(at: 0))
            answer.removeFirst(4)
        }
    }

    func closeStreams() {
        guard let channel else { return }
        for stream in [channel.inputStream!, channel.outputStream!] as [Stream] {
            stream.close()
            stream.remove(from: schedulesInCurrentRunLoop ? .current : .main, forMode: .default)
            stream.delegate = nil
        }
        self.channel = nil
    }
}

/// The watch app and the phone app on one bridge, the phone connected with its channel open.
@MainActor
func startCompanionApps(
    on bridge: MockBLEBridge, file: Data, chunkSize: Int = 1_000, echoes: Bool = false,
    central configuration: MockCentralManager.Configuration? = nil, setUp: (PhoneFileSender) -> Void = { _ in }
) async throws -> (PhoneFileSender, WatchFileReceiver) {
    let watch = WatchFileReceiver(bridge: bridge, echoes: echoes)
    try await bridge.waitForApp { watch.psm != nil && watch.manager.isAdvertising }
    let phone = PhoneFileSender(bridge: bridge, file: file, chunkSize: chunkSize, configuration: configuration)
    phone.psm = watch.psm!
    setUp(phone)
    return (phone, watch)
}
