import BLECBM
import BLEMockKit
import Testing

/// The report of a `waitUntil` that outlasted its patience on a simulated system whose time
/// follows the wall clock (the driver's part is SystemWaitReportXCTests').
@Suite(.timeLimit(.minutes(10)))
struct WaitReportTests {
    @Test func theReportNamesTheSystemTheSeedHowLongAndWhatTheSimulationWaitsOn() {
        let report = WaitReport.message(
            since: .zero.advanced(by: .milliseconds(250)), now: .zero.advanced(by: .milliseconds(12_390)),
            waiting: ["connect (central A, peripheral B) since 0.25s", "read 2A37 since 1s"], seed: 42,
            system: "the XCTest testUpload")
        #expect(
            report
                == "a bridge.waitUntil { … } on the simulated system (installed by the XCTest testUpload; seed 42) has "
                + "waited 12.1 s of wall time (since 0.25s) and its condition still does not hold. With time following "
                + "the wall clock nothing ends it but its condition or cancelling its task: if the condition cannot "
                + "hold, the test waits for ever. Still waiting in the simulation: connect (central A, peripheral B) "
                + "since 0.25s; read 2A37 since 1s. Bound the wait (await it in a task that fulfils an expectation, and "
                + "cancel the task when the expectation times out).")
    }

    @Test func aWaitForAppIsNamedWithWhereItWasCalled() {
        let report = WaitReport.message(
            what: "a bridge.waitForApp { … } at AppTests/WatchTests.swift:42", since: .zero,
            now: .zero.advanced(by: .seconds(10)), waiting: [], seed: 5, system: "the test found()")
        #expect(
            report.hasPrefix(
                "a bridge.waitForApp { … } at AppTests/WatchTests.swift:42 on the simulated system (installed by the "
                    + "test found(); seed 5) has waited 10.0 s of wall time"))
    }

    @Test func withNothingWaitingTheReportSaysSo() {
        let report = WaitReport.message(
            since: .zero, now: .zero.advanced(by: .seconds(10)), waiting: [], seed: 0, system: "s")
        #expect(report.contains("has waited 10.0 s of wall time (since 0s)"))
        #expect(report.contains("No operation is waiting in the simulation. Bound the wait"))
    }

    @Test func aWaitLeftSuspendedByUninstallingIsNamedInTheSingular() {
        #expect(
            WaitReport.leftWaiting(1, seed: 3, system: "the XCTest testScan")
                == "the simulated system (installed by the XCTest testScan; seed 3) was uninstalled while 1 "
                + "bridge.waitUntil { … } call on its bridge still waited. Its time has stopped and its managers are "
                + "invalid, so it ends only if its task is cancelled. Await or cancel such waits before the system is "
                + "uninstalled (in the test, before tearDown).")
    }
}
