extension PeripheralProfile {
    /// A profile the kit bundles, by name: the file of the same name in the repository's
    /// `Fixtures/peripherals`, compiled into the library, so no path or resource bundle is
    /// needed.
    ///
    /// ```swift
    /// let sensor = try await PeripheralProfile.bundled(.heartRate).makePeripheral(on: bridge)
    /// let measurement = sensor.characteristic(id: "hrm")
    /// ```
    ///
    /// It does not throw: the bundled files are fixed when the kit is built, and the kit's own
    /// tests parse every one, so a bundled profile that did not parse would be a defect of the
    /// kit rather than of your input; it stops the program with the ``FixtureError``.
    ///
    /// - Parameter profile: which bundled profile.
    /// - Returns: the profile, as ``init(json:file:)`` reads the file.
    public static func bundled(_ profile: BundledProfile) -> PeripheralProfile {
        do {
            return try PeripheralProfile(json: profile.json, file: profile.fileName)
        } catch {
            fatalError("BLEMockKit's bundled profile \(profile.fileName) does not parse, a defect of the kit: \(error)")
        }
    }
}
