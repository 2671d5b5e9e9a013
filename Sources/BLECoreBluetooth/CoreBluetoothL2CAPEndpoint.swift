#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    /// An ``BLECore/L2CAPChannel`` end backed by a `CBL2CAPChannel`'s input and output streams.
    ///
    /// The streams are scheduled on the run loop of a thread of their own, as CoreBluetooth's
    /// channels require: bytes that arrive are read there and yielded to ``incoming``; bytes
    /// sent wait in an outbox that is written whenever the output stream has space (a 20 ms
    /// timer also starts writes queued while the stream was idle). The stream ending or failing
    /// finishes ``incoming`` and fails waiting sends.
    ///
    /// On Linux this type is only type-checked (against a declaration-only CoreBluetooth).
    final class CoreBluetoothL2CAPEndpoint: NSObject, L2CAPEndpoint, StreamDelegate, @unchecked Sendable {
        // @unchecked Sendable: the streams are only used on `thread`; `outbox` and `isClosed`
        // are only touched with `lock` held, and continuations are resumed after releasing it.

        /// The SDU size reads are chunked into (CoreBluetooth does not report the channel MTU).
        static let mtu = 2_048

        private struct Pending {
            var data: Data
            var offset: Int
            let done: CheckedContinuation<Void, any Error>
        }

        let channel: CBL2CAPChannel
        let incoming: AsyncStream<Data>
        private let continuation: AsyncStream<Data>.Continuation
        private let lock = Lock()
        private var outbox: [Pending] = []
        private var isClosed = false

        init(channel: CBL2CAPChannel) {
            self.channel = channel
            (incoming, continuation) = AsyncStream.makeStream()
            super.init()
            let thread = Thread { [self] in runStreams() }
            thread.name = "BLECoreBluetooth.L2CAP"
            thread.start()
        }

        func send(_ data: Data) async throws {
            guard !data.isEmpty else { return }
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                let refused: Bool = lock.withLock {
                    guard !isClosed else { return true }
                    outbox.append(Pending(data: data, offset: 0, done: done))
                    return false
                }
                if refused { done.resume(throwing: CoreBluetoothError(.notConnected)) }
            }
        }

        func close() async { closeNow() }

        /// Closes the channel: ``incoming`` finishes, waiting sends fail with `notConnected`,
        /// and the stream thread closes the streams and ends.
        func closeNow(failingWith error: CoreBluetoothError = CoreBluetoothError(.notConnected)) {
            let pending: [Pending] = lock.withLock {
                guard !isClosed else { return [] }
                isClosed = true
                defer { outbox = [] }
                return outbox
            }
            for entry in pending { entry.done.resume(throwing: error) }
            continuation.finish()
        }

        // MARK: The stream thread

        private func runStreams() {
            let runLoop = RunLoop.current
            let streams: [Stream] = [channel.inputStream, channel.outputStream].compactMap { $0 }
            for stream in streams {
                stream.delegate = self
                stream.schedule(in: runLoop, forMode: .default)
                stream.open()
            }
            let timer = Timer(timeInterval: 0.02, repeats: true) { [weak self] _ in self?.flush() }
            runLoop.add(timer, forMode: .default)
            while !lock.withLock({ isClosed }) {
                _ = runLoop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.1))
            }
            timer.invalidate()
            for stream in streams {
                stream.close()
                stream.remove(from: runLoop, forMode: .default)
            }
        }

        func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
            switch eventCode {
            case .hasBytesAvailable:
                readAvailable()
            case .hasSpaceAvailable:
                flush()
            case .endEncountered, .errorOccurred:
                closeNow(failingWith: CoreBluetoothError(.peripheralDisconnected))
            default:
                break
            }
        }

        private func readAvailable() {
            guard let input = channel.inputStream else { return }
            var buffer = [UInt8](repeating: 0, count: Self.mtu)
            while input.hasBytesAvailable {
                let count = input.read(&buffer, maxLength: buffer.count)
                guard count > 0 else { break }
                continuation.yield(Data(buffer[0..<count]))
            }
        }

        /// Writes from the outbox while the output stream has space.
        private func flush() {
            guard let output = channel.outputStream else { return }
            while output.hasSpaceAvailable {
                let next: Pending? = lock.withLock { outbox.first }
                guard var entry = next else { return }
                let written = entry.data.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return 0 }
                    return output.write(base + entry.offset, maxLength: entry.data.count - entry.offset)
                }
                guard written >= 0 else {
                    closeNow(failingWith: CoreBluetoothError(.peripheralDisconnected))
                    return
                }
                entry.offset += written
                let finished: Bool = lock.withLock {
                    guard !outbox.isEmpty else { return false }
                    if entry.offset >= entry.data.count {
                        outbox.removeFirst()
                        return true
                    }
                    outbox[0].offset = entry.offset
                    return false
                }
                if finished { entry.done.resume() }
                if written == 0 { return }
            }
        }
    }
#endif
