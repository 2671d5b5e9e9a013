import BLECapture

/// libFuzzer entry point: feeds the input to the capture importer in both formats, and to the
/// ATT decoder.
///
/// The input goes to ``CaptureImporter`` as it is (the content picks the format: btsnoop
/// seeds start with `btsnoop\0`, PacketLogger seeds are records from the first byte), as a
/// PacketLogger file the caller insists on, and — after a btsnoop header whose datalink the
/// first byte picks (H4, H1 or the Linux monitor) — as btsnoop records; and it is decoded as
/// one ATT PDU. Beyond "nothing traps, hangs or leaks": the importer never writes a document
/// the fixture format rejects, every error and warning describes itself, the PacketLogger
/// reader is deterministic, reads records that tile the bytes it consumed (writing them back
/// gives those bytes), and reports where it stopped, and the ATT decoder is deterministic and
/// its errors agree with the bytes. Broken properties stop the run with `fatalError`, which
/// libFuzzer reports as a crash with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    checkPacketLogger(bytes)
    checkATT(bytes)
    checkImport(bytes, format: nil)
    checkImport(bytes, format: .packetLogger)
    if let first = bytes.first, !bytes.starts(with: BTSnoopFile.identification) {
        let datalink: [UInt8] = [[0, 0, 0x03, 0xEA], [0, 0, 0x03, 0xE9], [0, 0, 0x07, 0xD1]][Int(first % 3)]
        checkImport(BTSnoopFile.identification + [0, 0, 0, 1] + datalink + bytes.dropFirst(), format: .btsnoop)
    }
    return 0
}

/// Imports `bytes`; the outcome must be an import or an error that says what went wrong.
func checkImport(_ bytes: [UInt8], format: CaptureFormat?) {
    do throws(CaptureImportError) {
        let imported = try CaptureImporter().importCapture(bytes: bytes, name: "fuzz", format: format)
        if bytes.starts(with: BTSnoopFile.identification), imported.format != .btsnoop {
            fatalError("bytes starting with btsnoop\\0 were read as \(imported.format)")
        }
        for warning in imported.warnings where warning.message.isEmpty {
            fatalError("a warning without a message: \(warning.kind)")
        }
    } catch .invalidOutput(let error) {
        fatalError("the importer wrote a document the fixture format rejects: \(error)")
    } catch {
        guard !error.description.isEmpty else { fatalError("an import error without a description: \(error)") }
        if case .unreadablePacketLogger = error, format != .packetLogger {
            fatalError("a PacketLogger error for bytes nobody said were PacketLogger: \(error)")
        }
    }
}

/// Reads `bytes` as PacketLogger and checks what the reader says against the bytes.
func checkPacketLogger(_ bytes: [UInt8]) {
    let file: PacketLoggerFile
    do throws(PacketLoggerError) {
        file = try PacketLoggerFile(bytes: bytes)
    } catch {
        guard !PacketLoggerFile.isPacketLogger(bytes), error.recordIndex ?? 0 == 0, !error.description.isEmpty else {
            fatalError("a rejection that is inconsistent: \(error)")
        }
        return
    }
    guard PacketLoggerFile.isPacketLogger(bytes), !file.records.isEmpty else {
        fatalError("a file was read that isPacketLogger rejects, or with no records")
    }
    guard (try? PacketLoggerFile(bytes: bytes)) == file else { fatalError("two reads of the same bytes differ") }
    var written: [UInt8] = []
    for (index, record) in file.records.enumerated() {
        guard record.index == index, record.data.count <= Int(PacketLoggerFile.maximumRecordLength) - 9 else {
            fatalError("record \(index) has index \(record.index) and \(record.data.count) bytes")
        }
        written += write(record, in: file)
    }
    guard bytes.starts(with: written) else { fatalError("the records do not write back to the bytes they came from") }
    if let tail = file.unreadableTail {
        guard tail.recordIndex == file.records.count, written.count < bytes.count, !tail.description.isEmpty else {
            fatalError("reading stopped at \(written.count) of \(bytes.count) bytes with \(tail)")
        }
    } else if written.count != bytes.count {
        fatalError("the records cover \(written.count) of \(bytes.count) bytes and no error says why")
    }
}

/// A record as the file holds it.
func write(_ record: PacketLoggerRecord, in file: PacketLoggerFile) -> [UInt8] {
    func word(_ value: UInt32) -> [UInt8] {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * (3 - $0))) }
        return file.byteOrder == .bigEndian ? bytes : bytes.reversed()
    }
    let stamp =
        file.timestampLayout == .secondsFirst
        ? word(record.seconds) + word(record.microseconds) : word(record.microseconds) + word(record.seconds)
    return word(UInt32(9 + record.data.count)) + stamp + [record.kind.rawValue] + record.data
}

/// Decodes `bytes` as one ATT PDU: twice gives the same outcome, and an error agrees with the
/// bytes (the opcode it names is the first byte; a truncated field needed more than was left).
func checkATT(_ bytes: [UInt8]) {
    let first = Result { () throws(ATTDecodingError) in try ATTPDU(bytes: bytes) }
    guard first == Result(catching: { () throws(ATTDecodingError) in try ATTPDU(bytes: bytes) }) else {
        fatalError("two decodings of the same ATT PDU differ")
    }
    guard case .failure(let error) = first else { return }
    guard !error.description.isEmpty else { fatalError("an ATT decoding error without a description") }
    switch error {
    case .empty:
        guard bytes.isEmpty else { fatalError("\(bytes.count) bytes reported as an empty PDU") }
    case .unknownOpcode(let opcode), .malformed(let opcode, _):
        guard opcode == bytes.first else { fatalError("\(error) names another opcode than the first byte") }
    case .truncated(let opcode, let needed, let available):
        guard opcode == bytes.first, needed > available, available <= bytes.count else {
            fatalError("\(error) does not fit the \(bytes.count) bytes")
        }
    }
}
