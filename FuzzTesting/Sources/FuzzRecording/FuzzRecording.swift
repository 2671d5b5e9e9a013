import BLECapture
import BLEMockKit
import FuzzFixtureChecks

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// libFuzzer entry point: reads the input as a session recording (a `SessionRecorder`'s file)
/// and imports what loads as a profile and a scenario, as `mockble import` does.
///
/// Beyond "nothing traps, hangs or leaks": reading is deterministic (twice gives equal
/// recordings or equal errors), an error says what went wrong and how to fix it and points
/// inside the input, a recording that loads writes back (``SessionRecording/jsonText``) to a
/// file that loads as the same recording, and the importer never writes a document the
/// fixture format rejects, and names what stopped it otherwise. Broken properties stop the
/// run with `fatalError`, which libFuzzer reports as a crash with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecording(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let loaded = checkDeterministic(data) { () throws(FixtureError) in
        try SessionRecording(json: data, file: "fuzz.json")
    }
    guard let recording = loaded else { return 0 }
    let written = recording.jsonText
    do throws(FixtureError) {
        let reread = try SessionRecording(json: Data(written.utf8), file: "written.json")
        guard reread == recording else { fatalError("the recording written back reads as another one:\n\(written)") }
    } catch {
        fatalError("the recording written back does not load: \(error)\n\(written)")
    }
    checkImport(recording)
    return 0
}

/// Imports `recording` (with no placeholder values, then with one for each it names): the
/// outcome is an import or an error that says what stopped it.
func checkImport(_ recording: SessionRecording) {
    var placeholders: [String: Data] = [:]
    for attempt in 0..<2 {
        do throws(RecordingImportError) {
            _ = try RecordingImporter(placeholders: placeholders).importRecording(recording, name: "fuzz")
            return
        } catch .invalidOutput(let error) {
            fatalError("the importer wrote a document the fixture format rejects: \(error)")
        } catch .missingPlaceholder(let name, _) where attempt == 0 {
            placeholders[name] = Data([0x01, 0x02])
        } catch {
            guard !error.description.isEmpty else { fatalError("an import error without a description: \(error)") }
            return
        }
    }
}
