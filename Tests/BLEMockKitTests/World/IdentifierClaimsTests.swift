import Foundation
import Testing

@testable import BLEMockKit

/// The identifier claims of a bridge, synchronously.
@Suite("Identifier claims", .timeLimit(.minutes(10)))
struct IdentifierClaimsTests {
    let one = UUID(uuidString: "0000AAAA-0000-0000-0000-000000000001")!

    @Test func aSecondClaimOfAnIdentifierIsRefusedWithOrWithoutARestoreIdentifier() {
        var claims = IdentifierClaims()
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        #expect(claims.claim(one, restoreIdentifier: "app") == .taken)
        #expect(claims.claim(one, restoreIdentifier: nil) == .taken)
    }

    @Test func onlyOneManagerWithTheSameRestoreIdentifierTakesOverATerminatedAppsIdentifier() {
        var claims = IdentifierClaims()
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        claims.awaitRelaunch(of: one, restoreIdentifier: "app")
        #expect(claims.claim(one, restoreIdentifier: "other") == .taken)
        #expect(claims.claim(one, restoreIdentifier: nil) == .taken)
        #expect(claims.claim(one, restoreIdentifier: "app") == .takenOver)
        #expect(claims.claim(one, restoreIdentifier: "app") == .taken)
    }

    @Test func anIdentifierNoManagerClaimedCannotAwaitARelaunch() {
        var claims = IdentifierClaims()
        claims.awaitRelaunch(of: one, restoreIdentifier: "app")
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        #expect(claims.claim(one, restoreIdentifier: "app") == .taken)
    }

    @Test func aReleasedIdentifierIsGrantedAgainAndAnOlderHoldersLateReleaseLeavesItAlone() {
        var claims = IdentifierClaims()
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        let first = claims.ticket(of: one)
        claims.release(one, ticket: first)
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        let second = claims.ticket(of: one)
        #expect(second != first)
        // The first releasing again (a front end's shut-down after its engine's release) leaves
        // the second's claim alone.
        claims.release(one, ticket: first)
        #expect(claims.claim(one, restoreIdentifier: "app") == .taken)
        claims.release(one, ticket: second)
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
    }

    @Test func aTerminatedAppsManagerReleasesNothingBeforeOrAfterItsSuccessorTakesOver() {
        var claims = IdentifierClaims()
        #expect(claims.claim(one, restoreIdentifier: "app") == .granted)
        let terminated = claims.ticket(of: one)
        claims.awaitRelaunch(of: one, restoreIdentifier: "app")
        // The system keeps it for the app's next manager.
        claims.release(one, ticket: terminated)
        #expect(claims.claim(one, restoreIdentifier: nil) == .taken)
        #expect(claims.claim(one, restoreIdentifier: "app") == .takenOver)
        // The successor holds it now.
        claims.release(one, ticket: terminated)
        #expect(claims.claim(one, restoreIdentifier: "app") == .taken)
    }
}
