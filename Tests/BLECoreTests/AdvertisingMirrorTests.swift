import BLECore
import Testing

/// What a peripheral manager's front end says of its advertising as Bluetooth's state changes.
@Suite("Advertising across Bluetooth's states", .timeLimit(.minutes(10)))
struct AdvertisingMirrorTests {
    static func advertising() -> AdvertisingMirror {
        var mirror = AdvertisingMirror()
        mirror.isAdvertising = true
        return mirror
    }

    @Test("Turned off, advertising pauses and goes on once powered on again")
    func poweredOffPauses() {
        var mirror = Self.advertising()
        mirror.stateChanged(to: .poweredOff)
        #expect(!mirror.isAdvertising)
        mirror.stateChanged(to: .poweredOn)
        #expect(mirror.isAdvertising)
        // Once only: the next power cycle of a manager that stopped meanwhile does not start it.
        mirror.isAdvertising = false
        mirror.stateChanged(to: .poweredOff)
        mirror.stateChanged(to: .poweredOn)
        #expect(!mirror.isAdvertising)
    }

    @Test(
        "Below powered off, advertising is over, even after a pause",
        arguments: [ManagerState.unknown, .resetting, .unsupported, .unauthorized])
    func belowPoweredOffEnds(state: ManagerState) {
        var direct = Self.advertising()
        direct.stateChanged(to: state)
        direct.stateChanged(to: .poweredOn)
        #expect(direct == AdvertisingMirror())
        var afterPause = Self.advertising()
        afterPause.stateChanged(to: .poweredOff)
        afterPause.stateChanged(to: state)
        afterPause.stateChanged(to: .poweredOn)
        #expect(afterPause == AdvertisingMirror())
    }

    @Test("A manager not advertising as Bluetooth turns off does not advertise once it is on")
    func notAdvertisingStaysSo() {
        var mirror = AdvertisingMirror()
        mirror.stateChanged(to: .poweredOff)
        mirror.stateChanged(to: .poweredOn)
        #expect(mirror == AdvertisingMirror())
    }
}
