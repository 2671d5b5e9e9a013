import Testing

@testable import BLECapture

@Suite("L2CAP reassembly", .timeLimit(.minutes(10)))
struct L2CAPReassemblerTests {
    /// A Handle Value Notification of handle 0x0010 with `count` pattern bytes, as an L2CAP frame.
    static func frame(_ count: Int) -> [UInt8] {
        SnoopWriter.l2cap([0x1B, 0x10, 0x00] + (0..<count).map { UInt8($0 % 256) })
    }

    static func fragments(_ bytes: [UInt8], at cuts: [Int], handle: UInt16 = 0x40) -> [ACLFragment] {
        let bounds = [0] + cuts + [bytes.count]
        return zip(bounds, bounds.dropFirst()).enumerated().map { index, range in
            ACLFragment(
                handle: handle, boundary: index == 0 ? .firstFlushable : .continuing,
                data: Array(bytes[range.0..<range.1]))
        }
    }

    @Test func aFrameInOneFragmentComesOutWhole() {
        var reassembler = L2CAPReassembler()
        let outputs = reassembler.append(
            ACLFragment(handle: 0x40, boundary: .firstFlushable, data: Self.frame(3)), direction: .controllerToHost)
        #expect(
            outputs == [
                .frame(
                    L2CAPFrame(
                        handle: 0x40, direction: .controllerToHost, channel: 4, payload: [0x1B, 0x10, 0x00, 0, 1, 2]))
            ])
    }

    @Test func aFrameSplitAtEveryPointComesOutWhole() {
        let bytes = Self.frame(40)
        for cut in 1..<bytes.count {
            for second in [nil, cut + 1 < bytes.count ? cut + 1 : nil] {
                var reassembler = L2CAPReassembler()
                var outputs: [L2CAPReassembler.Output] = []
                for fragment in Self.fragments(bytes, at: [cut] + (second.map { [$0] } ?? [])) {
                    outputs += reassembler.append(fragment, direction: .controllerToHost)
                }
                #expect(
                    outputs == [
                        .frame(
                            L2CAPFrame(
                                handle: 0x40, direction: .controllerToHost, channel: 4, payload: Array(bytes[4...])))
                    ], "cut at \(cut)")
                #expect(!reassembler.hasOpenFrame(handle: 0x40))
            }
        }
    }

    @Test func directionsAndHandlesAreReassembledApart() {
        var reassembler = L2CAPReassembler()
        let sent = Self.fragments(Self.frame(10), at: [6])
        let received = Self.fragments(Self.frame(12), at: [7])
        let other = Self.fragments(Self.frame(5), at: [3], handle: 0x41)
        var outputs: [L2CAPReassembler.Output] = []
        outputs += reassembler.append(sent[0], direction: .hostToController)
        outputs += reassembler.append(received[0], direction: .controllerToHost)
        outputs += reassembler.append(other[0], direction: .controllerToHost)
        outputs += reassembler.append(received[1], direction: .controllerToHost)
        outputs += reassembler.append(sent[1], direction: .hostToController)
        outputs += reassembler.append(other[1], direction: .controllerToHost)
        let payloads = outputs.compactMap { output -> Int? in
            if case .frame(let frame) = output { return frame.payload.count - 3 }
            return nil
        }
        #expect(payloads == [12, 10, 5])
    }

    @Test func aContinuationWithoutAStartIsReportedAndDropped() {
        var reassembler = L2CAPReassembler()
        let outputs = reassembler.append(
            ACLFragment(handle: 0x40, boundary: .continuing, data: [1, 2, 3]), direction: .controllerToHost)
        #expect(outputs == [.problem(.continuationWithoutStart(handle: 0x40, direction: .controllerToHost, bytes: 3))])
    }

    @Test func aNewFrameBeforeTheOpenOneEndsReportsTheLostFragments() {
        var reassembler = L2CAPReassembler()
        let first = Self.fragments(Self.frame(30), at: [10])
        _ = reassembler.append(first[0], direction: .controllerToHost)
        let outputs = reassembler.append(
            ACLFragment(handle: 0x40, boundary: .firstFlushable, data: Self.frame(1)), direction: .controllerToHost)
        #expect(
            outputs.first
                == .problem(.interrupted(handle: 0x40, direction: .controllerToHost, expected: 33, received: 6)))
        #expect(outputs.count == 2)
        #expect(outputs.first.map { "\($0)" }?.isEmpty == false)
    }

    @Test func moreBytesThanTheHeaderAnnouncedIsAnOverrun() {
        var reassembler = L2CAPReassembler()
        let outputs = reassembler.append(
            ACLFragment(handle: 0x40, boundary: .firstFlushable, data: Self.frame(2) + [0xFF]),
            direction: .hostToController)
        #expect(outputs == [.problem(.overrun(handle: 0x40, direction: .hostToController, expected: 5, received: 6))])
    }

    @Test func aHeaderSplitAcrossFragmentsWaitsForItsLength() {
        var reassembler = L2CAPReassembler()
        let bytes = Self.frame(2)
        #expect(
            reassembler.append(
                ACLFragment(handle: 0x40, boundary: .firstFlushable, data: [bytes[0]]), direction: .controllerToHost
            ).isEmpty)
        #expect(
            reassembler.abandon(handle: 0x40) == [
                .abandoned(handle: 0x40, direction: .controllerToHost, expected: nil, received: 0)
            ])
    }

    @Test func abandoningReportsEachOpenFrame() {
        var reassembler = L2CAPReassembler()
        _ = reassembler.append(Self.fragments(Self.frame(30), at: [10])[0], direction: .controllerToHost)
        _ = reassembler.append(Self.fragments(Self.frame(30), at: [12], handle: 0x41)[0], direction: .hostToController)
        #expect(
            reassembler.abandon(handle: 0x41) == [
                .abandoned(handle: 0x41, direction: .hostToController, expected: 33, received: 8)
            ])
        #expect(
            reassembler.abandon() == [.abandoned(handle: 0x40, direction: .controllerToHost, expected: 33, received: 6)]
        )
        #expect(reassembler.abandon().isEmpty)
    }
}
