import Transport

/// libFuzzer entry point: drives a ``Reassembler`` with the input.
///
/// The first byte picks the mode. Even: the rest is an arbitrary packet sequence (see
/// ``PacketScript``), fed to a reassembler with small limits so that every limit is reached.
/// Odd: the rest is a message that is fragmented and delivered shuffled and partly
/// duplicated (see ``RoundTrip``), and must come out intact exactly once. Broken properties
/// stop the run with `fatalError`, which libFuzzer reports as a crash with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReassembly(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: start, count: count)
    if input[0] & 1 == 0 {
        PacketScript(input[1...]).run(configurationChoice: Int(input[0] >> 1))
    } else {
        RoundTrip(input[1...]).run()
    }
    return 0
}

/// An instant of a fuzz run's own time line; nothing reads a clock.
struct FuzzInstant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> FuzzInstant { FuzzInstant(offset: offset + duration) }
    func duration(to other: FuzzInstant) -> Duration { other.offset - offset }
    static func < (lhs: FuzzInstant, rhs: FuzzInstant) -> Bool { lhs.offset < rhs.offset }
}

/// The configurations a packet script runs against: tight limits reach every limit quickly;
/// the default one checks the shipped settings.
let configurations: [TransportConfiguration] = [
    TransportConfiguration(
        maximumMessageLength: 2_048, maximumPartialMessages: 4, partialMessageTimeout: .seconds(10),
        maximumRememberedMessages: 8),
    TransportConfiguration(),
    TransportConfiguration(
        maximumMessageLength: 0, maximumPartialMessages: 0, partialMessageTimeout: .zero,
        maximumRememberedMessages: 0),
    TransportConfiguration(
        maximumMessageLength: 64, maximumPartialMessages: 2, partialMessageTimeout: .milliseconds(1),
        maximumRememberedMessages: 100_000),
]

/// An arbitrary packet sequence: records of `[control][length][length bytes]`.
///
/// The control byte's low two bits pick the link (0…3); the rest advance the time line by
/// that many seconds before the record. A length of 255 calls `expire(now:)` and 254 calls
/// `discardPartialMessages(for:)` instead of delivering a packet.
struct PacketScript {
    var bytes: Slice<UnsafeRawBufferPointer>

    init(_ bytes: Slice<UnsafeRawBufferPointer>) {
        self.bytes = bytes
    }

    func run(configurationChoice: Int) {
        let configuration = configurations[configurationChoice % configurations.count]
        var reassembler = Reassembler<UInt8, FuzzInstant>(configuration: configuration)
        var now = FuzzInstant(offset: .zero)
        var position = bytes.startIndex
        while position + 1 < bytes.endIndex {
            let control = bytes[position]
            let length = Int(bytes[position + 1])
            position += 2
            let link = control & 3
            now = now.advanced(by: .seconds(Int(control >> 2)))
            switch length {
            case 255:
                for expired in reassembler.expire(now: now) where expired.lastActivity > now {
                    fatalError("expired message \(expired.messageID) was active after \(now)")
                }
            case 254:
                reassembler.discardPartialMessages(for: link)
            default:
                let end = min(position + length, bytes.endIndex)
                let packet = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
                position = end
                do {
                    if let message = try reassembler.receive(packet, from: link, at: now),
                        message.count > max(0, configuration.maximumMessageLength)
                    {
                        fatalError("a \(message.count)-byte message passed the limit of \(configuration)")
                    }
                } catch {
                    if error.description.isEmpty { fatalError("\(error) does not describe itself") }
                }
            }
            if reassembler.partialMessageCount > max(1, configuration.maximumPartialMessages) {
                fatalError("\(reassembler.partialMessageCount) partial messages exceed \(configuration)")
            }
        }
    }
}
