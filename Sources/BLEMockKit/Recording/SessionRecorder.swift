import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps what an app does and sees through a central, with the time of each event: the log
/// behind ``RecordingCentralManager`` and BLECBM's recording `CBMCentralManager`.
///
/// Times come from the clock the caller gives, never from the wall clock: on a mock bridge
/// its `VirtualClock` (`bridge.clock`), on a device a monotonic clock (`ContinuousClock()`).
/// They count from the recorder's creation and never decrease (events recorded from several
/// threads are kept in the order they were recorded).
///
/// Values the app marks private with ``markPrivate(_:as:)`` — a token, a key — are never kept:
/// the recording holds a named placeholder instead, and the test that replays it supplies a
/// value for each name.
///
/// ```swift
/// let recorder = SessionRecorder(clock: ContinuousClock())
/// recorder.markPrivate(BluetoothUUID(UInt16(0x2A3D)), as: "token")
/// ```
public final class SessionRecorder: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read and written with `lock` held; `elapsed` is an
    // immutable Sendable closure.
    fileprivate struct State {
        var entries: [SessionRecording.Entry] = []
        var privateTypes: [BluetoothUUID: String] = [:]
        /// The placeholder of each private characteristic's value handle, per peripheral.
        var privateHandles: [UUID: [UInt16: String]] = [:]
    }

    private let lock = Lock()
    private var state = State()
    private let elapsed: @Sendable () -> Duration

    /// Creates a recorder whose times count from now on `clock`.
    public init<C: Clock>(clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
    }

    /// Keeps the values of characteristics of type `uuid` out of the recording: reads, writes
    /// and notifications of them are recorded with the placeholder `name` instead of their
    /// bytes. Mark before the characteristic is discovered.
    public func markPrivate(_ uuid: BluetoothUUID, as name: String) {
        lock.withLock { state.privateTypes[uuid] = name }
    }

    /// Records an event now. Values of characteristics marked private are replaced by their
    /// placeholder.
    public func record(_ event: RecordedEvent) {
        let now = elapsed()
        lock.withLock {
            let time = max(now, state.entries.last?.time ?? .zero)
            state.entries.append(SessionRecording.Entry(time: time, event: state.redacting(event)))
        }
    }

    /// What has been recorded so far.
    public var recording: SessionRecording {
        lock.withLock { SessionRecording(entries: state.entries) }
    }
}

extension SessionRecorder.State {
    /// The event with private values replaced; learns the private handles from discoveries.
    fileprivate mutating func redacting(_ event: RecordedEvent) -> RecordedEvent {
        switch event {
        case .characteristicsDiscovered(let peripheral, _, let characteristics):
            for characteristic in characteristics {
                if let name = privateTypes[characteristic.uuid] {
                    privateHandles[peripheral, default: [:]][characteristic.handle] = name
                }
            }
            return event
        case .read(let peripheral, let handle, .success):
            guard let name = privateHandles[peripheral]?[handle] else { return event }
            return .read(peripheral: peripheral, handle: handle, result: .success(.placeholder(name)))
        case .write(let peripheral, let handle, _, let withResponse, let error):
            guard let name = privateHandles[peripheral]?[handle] else { return event }
            return .write(
                peripheral: peripheral, handle: handle, value: .placeholder(name), withResponse: withResponse,
                error: error)
        case .valueUpdated(let peripheral, let handle, _, let isIndication):
            guard let name = privateHandles[peripheral]?[handle] else { return event }
            return .valueUpdated(
                peripheral: peripheral, handle: handle, value: .placeholder(name), isIndication: isIndication)
        default:
            return event
        }
    }
}
