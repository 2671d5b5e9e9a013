import Foundation

extension Subcommand {
    /// `mockble bench`: measures the kit against its performance targets.
    public static let bench = Subcommand(
        name: "bench", summary: "Measure the kit's speed, scale and memory against its targets.",
        help: """
            Usage: mockble bench [--quick] [--format text|json] [--suite NAME]

            Runs the performance suites and prints one line per figure: its name, the median
            over repeated runs, the unit, and the target it is held against. Build in release
            mode for meaningful figures: swift run -c release mockble bench (a debug build says
            so at the top of its output, on standard error with --format json).

            Suites: workflow (fast-mode test workflow, and the same steps through the
            CoreBluetooth-shaped API with its ratio), operations (single fast-mode
            operations), realistic (60 s realistic session: speed-up and identical traces),
            transport (1 MiB fragment + reassemble at packet sizes 20, 182, 244, 514, and a
            plain memory copy for reference), scan (10,000 advertising peripherals), connections
            (100 centrals x 10 peripherals), memory (resident bytes per idle peripheral; Linux),
            explore (seeds explored per second: a 4 KiB upload over writes without response
            and a commit, faults on, on every core), throughput (each named phone link
            profile's simulated notification and write-without-response throughput, in kb/s
            of virtual time, within 20% of the figure its source publishes).

            Options:
              --quick         A smoke run: fewer repetitions, and smaller workloads where
                              a figure allows (5,000 operations per batch instead of
                              20,000, explorations of 200 seeds instead of 1,000,
                              throughput streams of 300 values instead of 600).
              --format FORMAT text (default): aligned columns; json: one JSON object per
                              figure with fields name, median, unit, target, meets, repetitions.
              --suite NAME    Run one suite only.
              --memory-probe  Internal: print one memory measurement (the memory suite runs
                              each repetition this way, in a fresh process).
              -h, --help      Show this help.

            Exit status: 0 every target met, 1 a target missed (or a workload failed), 2 bad input.
            """,
        perform: { arguments, console in
            let parsed: ArgumentList
            let format: String
            do throws(ArgumentList.Problem) {
                parsed = try ArgumentList(arguments, options: ["format", "suite"], flags: ["quick", "memory-probe"])
                format = try parsed.choice("format", of: ["text", "json"], default: "text")
            } catch {
                console.printError("mockble bench: \(error.message)")
                return .badInput
            }
            guard parsed.positionals.isEmpty else {
                console.printError("mockble bench: unexpected argument \"\(parsed.positionals[0])\"")
                return .badInput
            }
            if parsed.flag("memory-probe") {
                // One memory measurement in this fresh process, for the memory suite.
                do {
                    let bytes = try await Benchmark.bytesPerIdlePeripheral(count: Benchmark.idlePeripheralCount)
                    console.print(bytes.map { "\($0)" } ?? "unavailable")
                    return .success
                } catch {
                    console.printError("mockble bench: the memory probe failed: \(error)")
                    return .failure
                }
            }
            var suites = Benchmark.Suite.allCases
            if let name = parsed.option("suite") {
                guard let suite = Benchmark.Suite(rawValue: name) else {
                    let known = suites.map(\.rawValue).joined(separator: ", ")
                    console.printError("mockble bench: unknown suite \"\(name)\" (known: \(known))")
                    return .badInput
                }
                suites = [suite]
            }
            // The memory suite measures in fresh processes of this tool, when it can find itself
            // (a copy named mockble-old or mockble-new, for a side-by-side run, counts too; a
            // test runner does not).
            let executable = Bundle.main.executableURL
            let probe = executable.flatMap { url in
                url.lastPathComponent.hasPrefix("mockble") ? Benchmark.processMemoryProbe(executable: url.path) : nil
            }
            let benchmark = Benchmark(sizes: parsed.flag("quick") ? .quick : .full, memoryProbe: probe)
            if let note = Benchmark.debugBuildNote {
                // JSON lines stay parseable: there the note goes to standard error.
                if format == "json" { console.printError(note) } else { console.print(note) }
            }
            if format == "text" {
                console.print("figure                            median                target                verdict")
            }
            do {
                let figures = try await benchmark.run(suites: suites) { figure in
                    console.print(format == "json" ? figure.jsonLine : figure.textLine)
                }
                return figures.allSatisfy(\.meets) ? .success : .failure
            } catch {
                console.printError("mockble bench: a workload failed: \(error)")
                return .failure
            }
        })
}
