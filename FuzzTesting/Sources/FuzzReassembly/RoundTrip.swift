import Transport

/// A message fragmented and delivered out of order: `[packet length][id: 2][seed: 2][message…]`.
///
/// The packet length is 20 plus the first byte. The packets are delivered on link 0 in an
/// order shuffled by the seed, with some duplicated (also after the message completed),
/// and on link 1 in reverse order, interleaved with link 0. Each link must yield the
/// message, intact, exactly once, with no error and nothing left partial.
struct RoundTrip {
    var bytes: Slice<UnsafeRawBufferPointer>

    init(_ bytes: Slice<UnsafeRawBufferPointer>) {
        self.bytes = bytes
    }

    func run() {
        guard bytes.count >= 5 else { return }
        let base = bytes.startIndex
        let maxPacketLength = Fragmenter.minimumPacketLength + Int(bytes[base])
        let id = UInt16(bytes[base + 1]) << 8 | UInt16(bytes[base + 2])
        var generator = SplitMix(state: UInt64(bytes[base + 3]) << 8 | UInt64(bytes[base + 4]))
        let message = Array(bytes[(base + 5)...])
        let packets: [[UInt8]]
        do {
            packets = try Fragmenter.packets(for: message, maxPacketLength: maxPacketLength, id: id)
        } catch {
            fatalError("a \(message.count)-byte message does not fragment at \(maxPacketLength): \(error)")
        }
        var shuffled: [Int] = Array(packets.indices)
        for index in shuffled.indices.reversed() where index > 0 {
            shuffled.swapAt(index, Int(generator.next() % UInt64(index + 1)))
        }
        var schedule: [(link: UInt8, packet: Int)] = []
        for (step, packet) in shuffled.enumerated() {
            schedule.append((0, packet))
            if generator.next() % 4 == 0 { schedule.append((0, shuffled[Int(generator.next() % UInt64(step + 1))])) }
            schedule.append((1, packets.count - 1 - step))
        }
        var reassembler = Reassembler<UInt8, FuzzInstant>()
        var completed: [UInt8: Int] = [:]
        for (step, delivery) in schedule.enumerated() {
            let now = FuzzInstant(offset: .milliseconds(step))
            do {
                guard let result = try reassembler.receive(packets[delivery.packet], from: delivery.link, at: now)
                else { continue }
                guard result == message else {
                    fatalError("link \(delivery.link) delivered \(result.count) bytes instead of \(message.count)")
                }
                completed[delivery.link, default: 0] += 1
            } catch {
                fatalError("packet \(delivery.packet) of \(packets.count) on link \(delivery.link) failed: \(error)")
            }
        }
        guard completed == [0: 1, 1: 1], reassembler.partialMessageCount == 0 else {
            fatalError("completions \(completed), \(reassembler.partialMessageCount) partial messages left")
        }
    }
}

/// SplitMix64, for shuffling deliveries reproducibly from the input.
struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
