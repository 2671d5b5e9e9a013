import Foundation
import Testing

/// Rules the whole test tree keeps, checked on its sources: a test that hangs is stopped by a
/// time limit rather than stalling the run, and no test waits by spinning the scheduler.
@Suite("Suite hygiene", .timeLimit(.minutes(10)))
struct SuiteHygieneTests {
    /// Every Swift file under `Tests/`, with its path relative to the package root.
    static func testSources() throws -> [(path: String, text: String)] {
        let root = DocumentationBlockTests.root
        let tests = root.appendingPathComponent("Tests")
        guard let walker = FileManager.default.enumerator(atPath: tests.path) else { return [] }
        var sources: [(path: String, text: String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: tests.appendingPathComponent(relative), encoding: .utf8)
            sources.append(("Tests/" + relative, text))
        }
        return sources.sorted { $0.path < $1.path }
    }

    /// The text of each `@Suite(…)` attribute in `text`, from its opening to its matching parenthesis.
    static func suiteAttributes(in text: String) -> [Substring] {
        var attributes: [Substring] = []
        var rest = text[...]
        while let start = rest.range(of: "@Suite(") {
            var depth = 0
            var end = start.upperBound
            for index in text[start.lowerBound...].indices {
                if text[index] == "(" { depth += 1 }
                if text[index] == ")" {
                    depth -= 1
                    if depth == 0 {
                        end = text.index(after: index)
                        break
                    }
                }
            }
            attributes.append(text[start.lowerBound..<end])
            rest = text[end...]
        }
        return attributes
    }

    @Test func theSourcesAreFound() throws {
        let sources = try Self.testSources()
        #expect(sources.count > 100)
        #expect(sources.contains { $0.path == "Tests/BLEMockKitTests/Documentation/SuiteHygieneTests.swift" })
    }

    @Test func noTestFunctionStandsOutsideASuite() throws {
        for source in try Self.testSources() {
            let free = source.text.split(separator: "\n").filter { $0.hasPrefix("@Test") }
            #expect(free.isEmpty, "\(source.path): a test outside a suite has no time limit: \(free)")
        }
    }

    @Test func everySuiteHasATimeLimit() throws {
        var suites = 0
        // This file names the attribute in strings and comments.
        for source in try Self.testSources() where !source.path.hasSuffix("/SuiteHygieneTests.swift") {
            for attribute in Self.suiteAttributes(in: source.text) {
                suites += 1
                #expect(attribute.contains(".timeLimit("), "\(source.path): \(attribute) has no time limit")
            }
        }
        #expect(suites > 100)
    }

    @Test func everyFileWithTestsDeclaresATimeLimitOrExtendsASuite() throws {
        for source in try Self.testSources() where source.text.contains("@Test") {
            let topLevel = source.text.split(separator: "\n").filter {
                $0.hasPrefix("struct ") || $0.hasPrefix("final class ") || $0.hasPrefix("class ")
                    || $0.hasPrefix("actor ") || $0.hasPrefix("enum ")
            }
            let limited = source.text.contains(".timeLimit(")
            #expect(
                limited || topLevel.isEmpty,
                "\(source.path): a type with tests has no @Suite time limit: \(topLevel)")
        }
    }

    @Test func noTestSpinsOnTaskYield() throws {
        let spin = "Task." + "yield()"
        for source in try Self.testSources() {
            #expect(!source.text.contains(spin), "\(source.path) waits with \(spin); await a condition instead")
        }
    }

    @Test func anAttributeIsReadToItsMatchingParenthesis() {
        let text = """
            @Suite("a (b)", .timeLimit(.minutes(10)))
            struct A {}
            @Suite(.serialized)
            struct B {}
            """
        #expect(
            Self.suiteAttributes(in: text) == [#"@Suite("a (b)", .timeLimit(.minutes(10)))"#, "@Suite(.serialized)"])
    }
}
