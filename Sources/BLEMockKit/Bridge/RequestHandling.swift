import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a mock peripheral answers centrals' reads and writes of its dynamic characteristics.
public enum RequestHandling: Sendable {
    /// The simulated stack answers at once: reads get the characteristic's current value
    /// (the last value written or sent with `updateValue`, initially empty); writes replace
    /// it and succeed. No request events are delivered. The default.
    case automatic
    /// Requests are delivered as `PeripheralEvent.readRequest(_:)` and
    /// `PeripheralEvent.writeRequests(_:)`, and the central waits until the peripheral
    /// answers with `respond(to:withResult:value:)` — the CoreBluetooth model, for testing
    /// an app's own peripheral role.
    case manual
    /// A closure answers each request at once (for a write batch, each request in order until
    /// one fails). It must not block. Its answers are checked as a manual peripheral's are: a
    /// read's value longer than an attribute holds from the request's offset on (512 bytes in
    /// all) is cut to it, and an error answer to a write command (`ATTRequest.isCommand`) is
    /// ignored; each is recorded in ``MockBLEBridge/misuses`` whatever `strictMisuse` says (an
    /// answer is no call that could throw). The value of an answer to a write is ignored.
    case handler(@Sendable (ATTRequest) -> RequestResponse)
}

/// A peripheral's answer to one request.
public struct RequestResponse: Hashable, Sendable {
    /// `ATTError.Code.success` or the ATT error to answer with.
    public var result: ATTError.Code
    /// For a successful read, the value from the request's offset on (at most 512 bytes from
    /// offset 0, as an attribute holds). Ignored for a write: an ATT Write Response has none.
    public var value: Data?

    /// Creates a response.
    public init(result: ATTError.Code, value: Data? = nil) {
        self.result = result
        self.value = value
    }

    /// A successful answer, with the value for a read.
    public static func success(_ value: Data? = nil) -> RequestResponse {
        RequestResponse(result: .success, value: value)
    }

    /// An ATT error answer.
    public static func error(_ code: ATTError.Code) -> RequestResponse { RequestResponse(result: code) }
}
