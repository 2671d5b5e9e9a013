import Foundation
import Testing

/// Every compiled Swift block of README.md, MIGRATION.md and the DocC articles appears
/// verbatim in one of the example test files, so documentation samples compile and run.
/// Blocks fenced as ```swift before (the old code in MIGRATION.md) and package manifests
/// are not compiled. `scripts/sync-doc-examples.py` copies the examples into the documents.
@Suite("Documentation samples", .timeLimit(.minutes(10)))
struct DocumentationBlockTests {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static var documents: [URL] {
        var documents = [root.appendingPathComponent("README.md"), root.appendingPathComponent("MIGRATION.md")]
        let sources = root.appendingPathComponent("Sources")
        for module in (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [] {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("\(module).docc")
            let articles = (try? FileManager.default.contentsOfDirectory(atPath: catalog.path)) ?? []
            documents += articles.filter { $0.hasSuffix(".md") }.sorted().map { catalog.appendingPathComponent($0) }
        }
        return documents
    }

    static func normalized(_ text: some StringProtocol) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
            .joined(separator: "\n")
    }

    static func compiledBlocks(of document: String) -> [String] {
        document.components(separatedBy: "```swift\n").dropFirst()
            .map { $0.components(separatedBy: "```")[0] }
            .filter { !$0.contains(".package(") }
    }

    @Test func everyDocumentedSwiftBlockIsCompiled() throws {
        let examples = root(of: "Tests/BLEMockKitTests")
        var sources = [examples.appendingPathComponent("ReadmeExampleTests.swift")]
        let folder = examples.appendingPathComponent("Documentation")
        sources += try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .map { folder.appendingPathComponent($0) }
        for folder in [
            "Tests/BLECBMTests/Documentation", "Tests/BLEMockKitTestingTests/Documentation",
            "Tests/BLEMockKitXCTestTests/Documentation",
        ] {
            let examples = root(of: folder)
            sources += try FileManager.default.contentsOfDirectory(atPath: examples.path)
                .filter { $0.hasSuffix(".swift") }.map { examples.appendingPathComponent($0) }
        }
        let compiled = try sources.map { Self.normalized(try String(contentsOf: $0, encoding: .utf8)) }
            .joined(separator: "\n")
        var counts: [String: Int] = [:]
        for url in Self.documents {
            let text = try String(contentsOf: url, encoding: .utf8)
            let blocks = Self.compiledBlocks(of: text)
            counts[url.lastPathComponent] = blocks.count
            for block in blocks {
                #expect(
                    compiled.contains(Self.normalized(block)),
                    "\(url.lastPathComponent): a Swift block is not in the example tests; run scripts/sync-doc-examples.py or add it:\n\(block)"
                )
            }
        }
        #expect(counts["README.md", default: 0] >= 6)
        #expect(counts["MIGRATION.md", default: 0] >= 11)
        for article in [
            "GettingStarted.md", "RealisticMode.md", "InjectingErrors.md", "FixturesAndScenarios.md",
            "TestingCoreBluetoothApps.md", "ExploringSeedsAndFaults.md",
        ] {
            #expect(counts[article, default: 0] >= 1, "\(article)")
        }
    }

    @Test func migrationShowsBeforeAndAfterForEachSource() throws {
        let migration = try String(contentsOf: Self.root.appendingPathComponent("MIGRATION.md"), encoding: .utf8)
        for heading in [
            "## From actor-based mocks in the style of Bleu", "## From a CoreBluetoothEmulator-style bus emulator",
            "## From Nordic's CoreBluetoothMock",
        ] {
            #expect(migration.contains(heading))
        }
        #expect(migration.components(separatedBy: "```swift before\n").count - 1 >= 10)
    }

    func root(of path: String) -> URL { Self.root.appendingPathComponent(path) }
}
