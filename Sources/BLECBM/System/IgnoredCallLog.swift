import BLEMockKit

/// The calls the CoreBluetooth-shaped managers on one bridge ignored, as CoreBluetooth ignores
/// them, in the order they were noted, each naming its manager (the lines of their
/// `apiMisuses`). Kept by the bridge, so a manager the app has let go of still counts: a stalled
/// run, and an XCTest that failed on a ``SimulatedSystem``, report them.
final class IgnoredCallLog: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only read and written with `lock` held.
    private let lock = Lock()
    private var lines: [String] = []

    /// The log of `bridge` (made, and offered to its stall reports, the first time).
    static func of(_ bridge: MockBLEBridge) -> IgnoredCallLog {
        bridge.frontEndSettings.object(for: ObjectIdentifier(IgnoredCallLog.self)) {
            let log = IgnoredCallLog()
            bridge.outside.addIgnoredCalls { [weak log] in log?.all ?? [] }
            return log
        }
    }

    /// Notes an ignored call (`line` names its manager).
    func note(_ line: String) {
        lock.withLock { lines.append(line) }
    }

    /// The calls noted so far, oldest first.
    var all: [String] { lock.withLock { lines } }
}
