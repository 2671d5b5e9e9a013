import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Lines as the fixture parser counts them: CR, LF and CRLF each end one.
public func lineCount(_ data: Data) -> Int {
    var lines = 1
    var previous: UInt8 = 0
    for byte in data {
        if byte == 0x0D || (byte == 0x0A && previous != 0x0D) { lines += 1 }
        previous = byte
    }
    return lines
}

/// Loads `data` twice with `load` and requires the same outcome; an error must say what went
/// wrong and how to fix it, and one in the input itself (named `file`) must point inside it.
/// Returns what loaded, if anything. Broken properties stop the run with `fatalError`.
@discardableResult
public func checkDeterministic<T: Equatable>(
    _ data: Data, file: String = "fuzz.json", _ load: () throws(FixtureError) -> T
) -> T? {
    let first = Result { () throws(FixtureError) in try load() }
    let second = Result { () throws(FixtureError) in try load() }
    guard first == second else { fatalError("two loads of the same bytes differ: \(first) / \(second)") }
    let error: FixtureError
    switch first {
    case .success(let loaded): return loaded
    case .failure(let failure): error = failure
    }
    guard !error.message.isEmpty, !error.fix.isEmpty, !error.description.isEmpty else {
        fatalError("error without a message or fix: \(error)")
    }
    let lines = lineCount(data)
    if error.file == file, error.line < 0 || error.line > lines || error.column < 0 {
        fatalError("error at \(error.line):\(error.column) lies outside the \(lines)-line input: \(error)")
    }
    return nil
}
