extension Scenario {
    /// A scenario the kit bundles, by name: the file of the same name in the repository's
    /// `Fixtures/scenarios`, compiled into the library, so no path or resource bundle is needed.
    /// A `peripheral` path in it (`"../peripherals/heart-rate.json"`) names a
    /// ``BundledProfile``, which it loads without touching the file system;
    /// ``peripheralPath`` keeps the path as written, as ``load(contentsOf:overrides:)`` does.
    ///
    /// ```swift
    /// let trace = await ScenarioRunner(Scenario.bundled(.heartRateBasic)).run()
    /// ```
    ///
    /// Its trace is the golden trace in the repository's `Fixtures/expected` (`NAME.jsonl`).
    /// To run it with another seed or mode, change ``seed`` or ``mode`` on the result.
    ///
    /// It does not throw: the bundled files are fixed when the kit is built, and the kit's own
    /// tests parse every one, so a bundled scenario that did not parse would be a defect of the
    /// kit rather than of your input; it stops the program with the ``FixtureError``.
    ///
    /// - Parameter scenario: which bundled scenario.
    /// - Returns: the scenario, as ``load(contentsOf:overrides:)`` reads the file.
    public static func bundled(_ scenario: BundledScenario) -> Scenario {
        do {
            let root = try FixtureJSON.parse(scenario.json)
            return try Scenario(node: root, file: scenario.fileName, profiles: .bundled, overrides: Overrides())
        } catch {
            fatalError(
                "BLEMockKit's bundled scenario \(scenario.fileName) does not parse, a defect of the kit: \(error)")
        }
    }

    /// The bundled profile a scenario in `Fixtures/scenarios` names by `path`:
    /// `"../peripherals/NAME.json"` for a ``BundledProfile`` `NAME`, the one form
    /// `scripts/generate-bundled-fixtures.py` lets a bundled scenario use.
    static func bundledProfile(at path: String, node: FixtureJSON) throws(FixtureError) -> PeripheralProfile {
        let prefix = "../peripherals/"
        let suffix = ".json"
        if path.hasPrefix(prefix), path.hasSuffix(suffix),
            let profile = BundledProfile(rawValue: String(path.dropFirst(prefix.count).dropLast(suffix.count)))
        {
            return try PeripheralProfile(json: profile.json, file: profile.fileName)
        }
        let names = BundledProfile.allCases.map(\.fileName).joined(separator: ", ")
        throw FixtureError(
            .missingFile(path), at: node, message: "no bundled profile at \(path)",
            fix: "a bundled scenario names a bundled profile as \"../peripherals/NAME.json\" (one of \(names))")
    }
}
