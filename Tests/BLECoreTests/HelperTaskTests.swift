import BLECore
import Testing

@Suite("Helper tasks", .timeLimit(.minutes(10)))
struct HelperTaskTests {
    final class Token: Sendable {}

    actor Seen {
        var identifiers: [ObjectIdentifier] = []
        func add(_ identifier: ObjectIdentifier) { identifiers.append(identifier) }
    }

    @Test func aTaskHoldingAPayloadHandsItOverAndHasLetGoOfItWhenItsValueReturns() async {
        var token: Token? = Token()
        let identifier = ObjectIdentifier(token!)
        weak let watched = token
        let seen = Seen()
        let task = HelperTask.start(holding: token!) { payload in await seen.add(ObjectIdentifier(payload)) }
        token = nil
        await task.value
        #expect(await seen.identifiers == [identifier])
        #expect(watched == nil)
    }
}
