import BLEMockKit

/// The calls app code made to the CoreBluetooth-shaped managers on one bridge that got no
/// callback, as with CoreBluetooth, in the order they were noted, each naming its manager: those
/// the managers ignored (the lines of their `apiMisuses`), and operations a link that went down,
/// or Bluetooth turning off, ended. Kept by the bridge, so a manager the app has let go of still
/// counts: a stalled run, and a failed test, report them.
final class UnansweredCallLog: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only read and written with `lock` held.
    private let lock = Lock()
    private var lines: [String] = []

    /// The log of `bridge` (made, and offered to its stall reports, the first time).
    static func of(_ bridge: MockBLEBridge) -> UnansweredCallLog {
        bridge.frontEndSettings.object(for: ObjectIdentifier(UnansweredCallLog.self)) {
            let log = UnansweredCallLog()
            bridge.outside.setUnansweredCalls { [weak log] in log?.all ?? [] }
            return log
        }
    }

    /// Notes a call that got no callback (`line` names its manager and says why).
    func note(_ line: String) {
        lock.withLock { lines.append(line) }
    }

    /// The calls noted so far, oldest first.
    var all: [String] { lock.withLock { lines } }
}
