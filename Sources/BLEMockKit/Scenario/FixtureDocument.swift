#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A fixture file of either kind: a scenario (an object with `"steps"` or `"peripheral"`) or a
/// peripheral profile. `mockble validate` reads files this way.
public enum FixtureDocument: Sendable, Hashable {
    /// A scenario, with its profile loaded.
    case scenario(Scenario)
    /// A peripheral profile.
    case profile(PeripheralProfile)

    /// Reads a file as a scenario if its top-level object has `"steps"` or `"peripheral"` (a
    /// scenario missing its steps is reported as such, not as a profile with an unknown field),
    /// else as a profile.
    ///
    /// - Throws: ``FixtureError`` naming the file, the position and the fix.
    public static func load(contentsOf url: URL) throws(FixtureError) -> FixtureDocument {
        let data = try FixtureFile.read(url)
        let root: FixtureJSON
        do throws(FixtureError) {
            root = try FixtureJSON.parse(data)
        } catch {
            throw error.inFile(FixtureFile.label(url))
        }
        if root.member("steps") != nil || root.member("peripheral") != nil {
            return .scenario(try Scenario.load(contentsOf: url))
        }
        return .profile(try PeripheralProfile.load(contentsOf: url))
    }
}
