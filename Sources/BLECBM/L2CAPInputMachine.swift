import Foundation

/// The state of an L2CAP channel's input stream: the bytes received and not yet read, and the
/// events due (see ``L2CAPStreamMachine``).
///
/// `read` hands out buffered bytes in the order they arrived and never waits: it returns 0 when
/// nothing is buffered (``hasBytesAvailable`` tells an empty buffer from the end, as does
/// ``status``: `.atEnd` once the channel has closed and every byte has been read).
struct L2CAPInputMachine: L2CAPStreamMachine {
    enum Item: Sendable, Equatable {
        /// An SDU arrived.
        case data(Data)
        /// The channel closed: nothing more arrives.
        case ended
    }

    private(set) var status: Stream.Status = .notOpen
    /// The SDUs received, from `head` on; the first has had `offset` bytes read.
    private var chunks: [Data] = []
    private var head = 0
    private var offset = 0
    /// How many bytes are buffered.
    private(set) var buffered = 0
    private var ended = false
    /// The one-time events delivered (`.openCompleted`, `.endEncountered`).
    private var reported: Stream.Event = []
    /// Whether `.hasBytesAvailable` may be delivered (again): until it is, then after each read
    /// (of one byte or more).
    private var bytesArmed = true

    /// Whether `read` would return bytes now.
    var hasBytesAvailable: Bool { status == .open && buffered > 0 }

    mutating func apply(_ item: Item) {
        switch item {
        case .data(let data):
            guard !ended, status != .closed, !data.isEmpty else { return }
            chunks.append(data)
            buffered += data.count
        case .ended:
            ended = true
            if status == .open && buffered == 0 { status = .atEnd }
        }
    }

    mutating func open() {
        guard status == .notOpen else { return }
        status = ended && buffered == 0 ? .atEnd : .open
    }

    mutating func close() {
        status = .closed
        chunks = []
        head = 0
        offset = 0
        buffered = 0
    }

    /// Copies up to `maxLength` buffered bytes to `buffer`; returns how many (0 when none are
    /// buffered or at the end), or -1 when the stream is not open or `maxLength` is negative.
    mutating func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        guard maxLength >= 0 else { return -1 }
        switch status {
        case .open: break
        case .atEnd: return 0
        default: return -1
        }
        // (A zero-length read moves nothing: the bytes are not announced again for it.)
        if maxLength > 0 { bytesArmed = true }
        var copied = 0
        while copied < maxLength, head < chunks.count {
            let chunk = chunks[head]
            let count = min(maxLength - copied, chunk.count - offset)
            chunk.withUnsafeBytes { bytes in
                let start = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset
                (buffer + copied).update(from: start, count: count)
            }
            copied += count
            offset += count
            if offset == chunk.count {
                head += 1
                offset = 0
            }
        }
        buffered -= copied
        if head == chunks.count || head > 64 {
            chunks.removeFirst(head)
            head = 0
        }
        if buffered == 0 && ended { status = .atEnd }
        return copied
    }

    func dueEvent(excluding: Stream.Event) -> Stream.Event? {
        guard status.isOpened else { return nil }
        if !reported.contains(.openCompleted) { return .openCompleted }
        if buffered > 0, bytesArmed, !excluding.contains(.hasBytesAvailable) { return .hasBytesAvailable }
        if status == .atEnd, !reported.contains(.endEncountered) { return .endEncountered }
        return nil
    }

    mutating func delivered(_ event: Stream.Event) {
        if event == .hasBytesAvailable {
            bytesArmed = false
        } else {
            reported.insert(event)
        }
    }
}
