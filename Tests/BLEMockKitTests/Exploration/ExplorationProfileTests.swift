import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// An exploration that draws phones: the budget's profiles, drawn after every other condition
/// so budgets without profiles draw as before; their words, replay code, shrinking and coverage.
@Suite("Exploration: drawing phone profiles", .timeLimit(.minutes(10)))
struct ExplorationProfileTests {
    static let window = Duration.zero ... .seconds(2)

    @Test("A budget with profiles draws the same plan as without, plus a phone from the list")
    func profilesAreDrawnLast() {
        var withPhones = ExplorationBudget()
        withPhones.profiles = LinkProfile.phones
        var phones: Set<String> = []
        for seed in UInt64(0)..<60 {
            let plain = ExplorationPlan.draw(seed: seed, budget: ExplorationBudget(), window: Self.window)
            let drawn = ExplorationPlan.draw(seed: seed, budget: withPhones, window: Self.window)
            #expect(plain.conditions.centralProfile == nil)
            let phone = drawn.conditions.centralProfile
            #expect(phone.map(LinkProfile.phones.contains) == true)
            phones.insert(phone?.name ?? "")
            var sameConditions = drawn.conditions
            sameConditions.centralProfile = nil
            #expect(sameConditions == plain.conditions)
        }
        #expect(phones == Set(LinkProfile.phones.map(\.name)))
    }

    @Test("A drawn phone sets the run's timing, shows in the conditions' words, and is named in replay code")
    func aPhoneIsAppliedAndNamed() {
        let conditions = LinkConditions(mtu: 185, centralProfile: .iPhoneiOS10)
        #expect(conditions.timing.centralProfile == .iPhoneiOS10)
        #expect(ExplorationPlan(seed: 1, conditions: conditions).configuration.timing.centralProfile == .iPhoneiOS10)
        #expect(LinkConditions(mtu: 185).timing.centralProfile == nil)
        #expect(conditions.description.hasSuffix(", phone iPhone 6s, iOS 10"))
        #expect(conditions.swiftCode == "LinkConditions(mtu: 185, centralProfile: .iPhoneiOS10)")
        for (name, profile) in LinkProfile.named {
            #expect(LinkConditions(mtu: 23, centralProfile: profile).swiftCode.hasSuffix("centralProfile: .\(name))"))
        }
    }

    @Test("A profile of one's own is written out in full in replay code")
    func aCustomProfileIsWrittenOut() {
        let custom = LinkProfile(
            name: "Pixel 8", connectionIntervals: .microseconds(7_500) ... .seconds(4),
            connectionIntervalStep: .microseconds(1_250), defaultConnectionInterval: .microseconds(48_750),
            preferredConnectionIntervals: .milliseconds(15) ... .milliseconds(30), maximumDataLength: 251,
            phys: [.le1M, .le2M], packetsPerConnectionEvent: 6, attMTU: 517)
        #expect(
            LinkConditions(mtu: 23, centralProfile: custom).swiftCode
                == "LinkConditions(mtu: 23, centralProfile: LinkProfile(name: \"Pixel 8\", "
                + "connectionIntervals: .microseconds(7500) ... .seconds(4), "
                + "connectionIntervalStep: .microseconds(1250), defaultConnectionInterval: .microseconds(48750), "
                + "preferredConnectionIntervals: .milliseconds(15) ... .milliseconds(30), maximumDataLength: 251, "
                + "phys: [.le1M, .le2M], packetsPerConnectionEvent: 6, attMTU: 517))")
        var bare = custom
        bare.preferredConnectionIntervals = nil
        bare.packetsPerConnectionEvent = nil
        #expect(!bare.swiftCode.contains("preferredConnectionIntervals"))
        #expect(!bare.swiftCode.contains("packetsPerConnectionEvent"))
        #expect(!bare.swiftCode.contains("intervalRequestRule"))
        var strict = custom
        strict.intervalRequestRule = .intervalMinOrDefault
        #expect(
            strict.swiftCode.contains(
                "defaultConnectionInterval: .microseconds(48750), intervalRequestRule: .intervalMinOrDefault, "))
        // A name with quotes, a backslash and a line break is written as a Swift literal (it was
        // written as is, and the replay code did not compile).
        var quoted = custom
        quoted.name = "Pixel \"8\" \\ lab\nbench"
        #expect(quoted.swiftCode.hasPrefix(#"LinkProfile(name: "Pixel \"8\" \\ lab\nbench", "#))
    }

    /// (The fields left the profile out without a word, so `mockble run` replayed another run.)
    @Test("A failure replayed as scenario fields says a profile of one's own is left out of them")
    func scenarioFieldsSayACustomProfileIsLeftOut() {
        var lab = LinkProfile.iPhoneiOS18
        lab.name = "Lab phone"
        func report(_ profile: LinkProfile) -> ExplorationFailureReport {
            let outcome = ExplorationOutcome(
                plan: ExplorationPlan(seed: 4, conditions: LinkConditions(mtu: 185, centralProfile: profile)),
                error: ExplorationFailure("upload failed"), faultsFired: [], duration: .seconds(1))
            return ExplorationFailureReport(found: outcome, minimal: outcome, steps: [], shrinkRuns: 0)
        }
        let custom = report(lab).text(replay: .scenarioFields)
        #expect(!custom.contains("centralProfile"))
        #expect(
            custom.hasSuffix(
                "  note: the phone profile \"Lab phone\" is one of your own, which a scenario cannot name: mockble run "
                    + "replays these fields without it (a different run); replay the plan in Swift to keep it"))
        let named = report(.iPhoneiOS18).text(replay: .scenarioFields)
        #expect(named.contains(#""centralProfile":"iPhoneiOS18""#) || named.contains("centralProfile"))
        #expect(!named.contains("note:"))
    }

    @Test("Shrinking offers to drop the phone profile")
    func shrinkingDropsThePhone() {
        let plan = ExplorationPlan(seed: 2, conditions: LinkConditions(mtu: 517, centralProfile: .iPhoneiOS9))
        let steps = ExplorationShrinker.simplifications(of: plan, windowEnd: .seconds(1))
        let dropped = steps.first { $0.step == "no phone profile" }
        #expect(dropped?.plan.conditions == LinkConditions(mtu: 517))
        #expect(
            !ExplorationShrinker.simplifications(of: ExplorationPlan(seed: 2), windowEnd: .seconds(1))
                .contains { $0.step == "no phone profile" })
    }

    @Test("A budget with a bad profile is refused, naming it")
    func aBadProfileInTheBudgetIsNamed() {
        var budget = ExplorationBudget()
        var broken = LinkProfile.iPhoneiOS18
        broken.attMTU = 600
        budget.profiles = [.iPhoneiOS9, broken]
        #expect(budget.problem == "ExplorationBudget.profiles[1].attMTU: 600 is outside 23…517")
        budget.profiles = LinkProfile.phones
        #expect(budget.problem == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The coverage counts runs per phone and lists them")
    func coverageCountsPhones() async {
        var budget = ExplorationBudget.conditionsOnly
        budget.profiles = [.iPhoneiOS9, .iPhoneiOS18]
        let report = await Exploration(budget: budget, seeds: 12).run { run in
            let central = MockCentralManager()
            _ = await central.waitForPoweredOn()
            await run.bridge.advance(by: .milliseconds(10))
        }
        #expect(report.passed, "\(report)")
        #expect(report.coverage.phones.values.reduce(0, +) == report.coverage.runs)
        #expect(Set(report.coverage.phones.keys) == ["iPhone 6, iOS 9", "iPhone 16 Pro, iOS 18"])
        #expect(report.description.contains("  phones: iPhone 16 Pro, iOS 18: "))
        // The links ran at the phones' own interval and packet limits (their 30 ms default, to
        // an explored peripheral that asks for none; 4 and 3 packets), whatever was drawn.
        #expect(report.coverage.connectionInterval == .milliseconds(30) ... .milliseconds(30))
        #expect(report.coverage.packetsPerConnectionEvent == 3...4)
        #expect(report.description.contains("\n  interval 0.03s…0.03s\n  packets per event 3…4\n"))
    }

    @Test("With a phone, the conditions give the interval and packet limit its links have, not the drawn ones")
    func aPhonesLinksHaveItsOwnIntervalAndPackets() {
        let drawn = LinkConditions(
            mtu: 185, connectionInterval: .microseconds(7_500), packetsPerConnectionEvent: 1,
            centralProfile: .iPhoneiOS18)
        #expect(drawn.linkConnectionInterval == .milliseconds(30))
        #expect(drawn.linkPacketsPerConnectionEvent == 3)
        #expect(drawn.description == "ATT_MTU 185, interval 0.03s, 3 packets per event, phone iPhone 16 Pro, iOS 18")
        // A profile without a packet limit: as many as fit.
        let kit = LinkConditions(mtu: 185, connectionInterval: .microseconds(7_500), centralProfile: .nRF52840)
        #expect(kit.linkConnectionInterval == .milliseconds(50))
        #expect(kit.linkPacketsPerConnectionEvent == nil)
        #expect(kit.description.contains("interval 0.05s, packets per event as fit, "))
        // Without a phone, what was drawn.
        let plain = LinkConditions(mtu: 23, connectionInterval: .microseconds(7_500), packetsPerConnectionEvent: 2)
        #expect(plain.linkConnectionInterval == .microseconds(7_500))
        #expect(plain.linkPacketsPerConnectionEvent == 2)
        #expect(plain.description == "ATT_MTU 23, interval 0.0075s, 2 packets per event")
    }
}
