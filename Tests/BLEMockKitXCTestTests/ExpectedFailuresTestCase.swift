import XCTest

/// A test case whose tests expect some failures (where XCTest has no `XCTExpectFailure`): a
/// failure recorded whose description contains one of ``expectedFailures`` is captured in
/// ``captured`` instead of failing the test.
class ExpectedFailuresTestCase: XCTestCase {
    /// The failures recorded that a test expected.
    final class Captured: @unchecked Sendable {
        // @unchecked Sendable: `stored` is only touched under `lock`.
        private let lock = NSLock()
        private var stored: [String] = []
        func add(_ text: String) { lock.withLock { stored.append(text) } }
        var texts: [String] { lock.withLock { stored } }
    }

    /// What the failures a test expects say (each a part of one's description).
    var expectedFailures: [String] = []
    /// The expected failures recorded so far.
    let captured = Captured()

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        if expectedFailures.contains(where: { description.contains($0) }) {
            captured.add(description)
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }
}
