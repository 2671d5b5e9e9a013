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
}
