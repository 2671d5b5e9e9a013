import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Answers from a manual peripheral

    func respond(peripheral: UUID, request: ATTRequest, result: ATTError.Code, value: Data?) throws {
        guard let open = openRequests[request.id], open.link.peripheral == peripheral else {
            throw APIMisuseError.unknownRequest(id: request.id)
        }
        openRequests[request.id] = nil
        let key = open.link
        world.record(
            .response, central: key.central, peripheral: peripheral, attribute: request.characteristic.uuid,
            handle: request.characteristic.handle, value: value, detail: "id=\(request.id) result=\(result.name)")
        guard let waitingID = open.waiting, let link = world.links[key] else { return }
        defer {
            if openRequests.values.allSatisfy({ $0.link != key || $0.waiting != waitingID }) {
                requestAnswered(on: key)
            }
        }
        switch open.kind {
        case .command:
            return
        case .blob:
            world.attPDUCount += 2
            guard result == .success else {
                resume(waitingID, with: .failure(ATTError(result)))
                return
            }
            resume(waitingID, with: .success((value ?? Data()).prefix(link.mtu - 1)))
        case .read(let soFar, let remote):
            world.attPDUCount += 2
            let logRead: (Data?, (any Error)?) -> Void = { value, error in
                self.world.record(
                    .read, central: key.central, peripheral: peripheral, attribute: remote.uuid, handle: remote.handle,
                    value: value, error: error)
            }
            guard result == .success else {
                logRead(nil, ATTError(result))
                resume(waitingID, with: .failure(ATTError(result)))
                return
            }
            let (total, done) = Self.appendReadPart(value ?? Data(), to: soFar, mtu: link.mtu)
            if done {
                logRead(total, nil)
                resume(waitingID, with: .success(total))
            } else {
                let next = makeRequest(
                    link: key, mtu: link.mtu, characteristic: request.characteristic, offset: total.count, value: nil)
                openRequests[next.id] = OpenRequest(
                    request: next, link: key, waiting: waitingID, kind: .read(soFar: total, remote: remote))
                world.links[key]!.requestInFlight = next.id
                deliverReadRequest(next, link: key)
            }
        case .write(let written, let remote, _):
            world.attPDUCount += 2 * Self.writeRoundTrips(length: written.count, mtu: link.mtu)
            let error = result == .success ? nil : ATTError(result)
            world.record(
                .write, central: key.central, peripheral: peripheral, attribute: remote.uuid, handle: remote.handle,
                value: written, writeType: .withResponse, error: error)
            resume(waitingID, with: error.map { .failure($0) } ?? .success(()))
        }
    }
}
