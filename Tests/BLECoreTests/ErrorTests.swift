import BLECore
import Testing

@Suite("ATT errors", .timeLimit(.minutes(10)))
struct ATTErrorTests {
    @Test("ATT error codes have the specification's raw values")
    func specificationRawValues() {
        let expected: [(ATTError.Code, UInt8, String)] = [
            (.success, 0x00, "success"), (.invalidHandle, 0x01, "invalidHandle"),
            (.readNotPermitted, 0x02, "readNotPermitted"), (.writeNotPermitted, 0x03, "writeNotPermitted"),
            (.invalidPdu, 0x04, "invalidPdu"), (.insufficientAuthentication, 0x05, "insufficientAuthentication"),
            (.requestNotSupported, 0x06, "requestNotSupported"), (.invalidOffset, 0x07, "invalidOffset"),
            (.insufficientAuthorization, 0x08, "insufficientAuthorization"),
            (.prepareQueueFull, 0x09, "prepareQueueFull"), (.attributeNotFound, 0x0A, "attributeNotFound"),
            (.attributeNotLong, 0x0B, "attributeNotLong"),
            (.insufficientEncryptionKeySize, 0x0C, "insufficientEncryptionKeySize"),
            (.invalidAttributeValueLength, 0x0D, "invalidAttributeValueLength"),
            (.unlikelyError, 0x0E, "unlikelyError"), (.insufficientEncryption, 0x0F, "insufficientEncryption"),
            (.unsupportedGroupType, 0x10, "unsupportedGroupType"),
            (.insufficientResources, 0x11, "insufficientResources"), (.databaseOutOfSync, 0x12, "databaseOutOfSync"),
            (.valueNotAllowed, 0x13, "valueNotAllowed"), (.writeRequestRejected, 0xFC, "writeRequestRejected"),
            (.cccdImproperlyConfigured, 0xFD, "cccdImproperlyConfigured"),
            (.procedureAlreadyInProgress, 0xFE, "procedureAlreadyInProgress"), (.outOfRange, 0xFF, "outOfRange"),
        ]
        for (code, raw, name) in expected {
            #expect(code.rawValue == raw)
            #expect(code.name == name)
            #expect(ATTError.Code(name: name) == code)
        }
        #expect(ATTError.Code.allNamed == expected.map(\.0))
    }

    @Test("The application range is 0x80 to 0x9F")
    func applicationRange() {
        #expect(ATTError.Code.application(0)?.rawValue == 0x80)
        #expect(ATTError.Code.application(0x1F)?.rawValue == 0x9F)
        #expect(ATTError.Code.application(0x20) == nil)
        #expect(ATTError.Code(rawValue: 0x85).isApplicationError)
        #expect(!ATTError.Code(rawValue: 0x7F).isApplicationError)
        #expect(!ATTError.Code(rawValue: 0xA0).isApplicationError)
        #expect(ATTError.Code(rawValue: 0x85).name == "application(0x85)")
        #expect(ATTError.Code(rawValue: 0x20).name == "reserved(0x20)")
        #expect(ATTError.Code(name: "application(0x85)") == nil)
    }

    @Test("Messages state the code, what went wrong and the fix")
    func messages() {
        #expect(
            ATTError(.readNotPermitted).description
                == "ATT error 0x02 readNotPermitted: the attribute cannot be read. "
                + "Check that the characteristic has the .read property and .readable permission.")
        #expect(ATTError(.invalidAttributeValueLength).description.contains("at most 512 bytes"))
        #expect(ATTError(.insufficientEncryption).description.contains("Pair with the peripheral"))
        #expect(ATTError(.invalidOffset).description.hasPrefix("ATT error 0x07 invalidOffset:"))
        #expect(ATTError(ATTError.Code(rawValue: 0x90)).description.contains("application-defined"))
        #expect(ATTError(ATTError.Code(rawValue: 0x30)).description.contains("reserved error code"))
        for code in ATTError.Code.allNamed {
            #expect(!ATTError(code).explanation.isEmpty)
        }
    }

    @Test("ATT errors are equal exactly when their codes are")
    func equality() {
        #expect(ATTError(.readNotPermitted) == ATTError(.readNotPermitted))
        #expect(ATTError(.readNotPermitted) != ATTError(.writeNotPermitted))
    }
}

@Suite("CoreBluetooth errors", .timeLimit(.minutes(10)))
struct CoreBluetoothErrorTests {
    @Test("CoreBluetooth error codes have CBError's raw values")
    func rawValues() {
        let expected: [(CoreBluetoothError.Code, Int)] = [
            (.unknown, 0), (.invalidParameters, 1), (.invalidHandle, 2), (.notConnected, 3), (.outOfSpace, 4),
            (.operationCancelled, 5), (.connectionTimeout, 6), (.peripheralDisconnected, 7), (.uuidNotAllowed, 8),
            (.alreadyAdvertising, 9), (.connectionFailed, 10), (.connectionLimitReached, 11), (.unknownDevice, 12),
            (.operationNotSupported, 13), (.peerRemovedPairingInformation, 14), (.encryptionTimedOut, 15),
            (.tooManyLEPairedDevices, 16), (.leGattExceededBackgroundNotificationLimit, 17),
            (.leGattNearBackgroundNotificationLimit, 18),
        ]
        #expect(CoreBluetoothError.Code.allCases.count == expected.count)
        for (code, raw) in expected {
            #expect(code.rawValue == raw)
            #expect(CoreBluetoothError.Code(name: code.description) == code)
        }
        #expect(CoreBluetoothError.Code(name: "timeout") == nil)
    }

    @Test("Messages state the code, what went wrong and the fix")
    func messages() {
        #expect(
            CoreBluetoothError(.peripheralDisconnected).description
                == "CoreBluetooth error 7 peripheralDisconnected: the peripheral disconnected; "
                + "reconnect and retry pending operations.")
        #expect(CoreBluetoothError(.connectionLimitReached).description.contains("disconnect another peripheral"))
        for code in CoreBluetoothError.Code.allCases {
            #expect(CoreBluetoothError(code).description.hasPrefix("CoreBluetooth error \(code.rawValue) \(code):"))
        }
    }
}
