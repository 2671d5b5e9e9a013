#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothPeripheralManager {
        // MARK: L2CAP

        /// Publishes a channel with `publishL2CAPChannel(withEncryption:)`; the PSM CoreBluetooth
        /// reports in `didPublishL2CAPChannel` is returned (calls are answered in order).
        public func publishL2CAPChannel(requiresEncryption: Bool) async throws -> UInt16 {
            try requirePoweredOn("publishL2CAPChannel")
            return try await psmOperations.wait(for: .publishL2CAPChannel) {
                manager.publishL2CAPChannel(withEncryption: requiresEncryption)
            }
        }

        /// Unpublishes a channel with `unpublishL2CAPChannel(_:)`, returning once CoreBluetooth
        /// confirmed it.
        public func unpublishL2CAPChannel(_ psm: UInt16) async throws {
            try requirePoweredOn("unpublishL2CAPChannel")
            _ = try await psmOperations.wait(for: .unpublishL2CAPChannel(psm: psm)) {
                manager.unpublishL2CAPChannel(psm)
            }
        }

        /// A central opened a channel: it is reported as an event (a failed open has nothing
        /// to report on this side).
        func channelOpened(_ channel: CBL2CAPChannel?, error: (any Error)?) {
            guard let channel, error == nil else { return }
            let id = nextChannelID
            nextChannelID += 1
            let peer = channel.peer?.identifier ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            let opened = L2CAPChannel(
                psm: channel.psm, peer: peer, id: id, mtu: CoreBluetoothL2CAPEndpoint.mtu,
                endpoint: CoreBluetoothL2CAPEndpoint(channel: channel))
            fanOut.yield(.l2capChannelOpened(opened))
        }

        // MARK: State restoration

        /// The system relaunched the app: takes back the services it kept (numbering them as
        /// if just added) and reports them with the advertisement, before any other event.
        func restore(_ dictionary: [String: Any]) {
            var services: [LocalService] = []
            for cbService in (dictionary[CBPeripheralManagerRestoredStateServicesKey] as? [CBMutableService]) ?? [] {
                let description = GATTService(
                    uuid: BluetoothUUID(cbService.uuid), isPrimary: cbService.isPrimary,
                    characteristics: (cbService.characteristics ?? []).map { characteristic in
                        GATTCharacteristic(
                            uuid: BluetoothUUID(characteristic.uuid),
                            properties: CharacteristicProperties(characteristic.properties),
                            permissions: (characteristic as? CBMutableCharacteristic).map {
                                AttributePermissions($0.permissions)
                            } ?? [])
                    })
                guard let (local, _) = try? number(cbService, describing: description) else { continue }
                published[local.handle] = Published(service: cbService, local: local)
                for (object, characteristic) in zip(cbService.characteristics ?? [], local.characteristics) {
                    guard let object = object as? CBMutableCharacteristic else { continue }
                    localCharacteristics[characteristic.handle] = (object, characteristic)
                }
                services.append(local)
            }
            let advertisement = (dictionary[CBPeripheralManagerRestoredStateAdvertisementDataKey] as? [String: Any])
                .map(AdvertisementData.init)
            if advertisement != nil { advertising.isAdvertising = true }
            fanOut.yield(.willRestoreState(RestoredPeripheralState(services: services, advertisement: advertisement)))
        }
    }
#endif
