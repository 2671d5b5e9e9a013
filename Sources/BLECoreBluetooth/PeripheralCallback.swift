#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth

    /// A delegate callback of `CBPeripheralManager`, captured on the manager's queue.
    enum PeripheralCallback {
        case stateUpdated(CBManagerState)
        case startedAdvertising((any Error)?)
        case added(CBService, (any Error)?)
        case subscribed(CBCentral, CBCharacteristic)
        case unsubscribed(CBCentral, CBCharacteristic)
        case readRequest(CBATTRequest)
        case writeRequests([CBATTRequest])
        case readyToUpdateSubscribers
        case willRestoreState([String: Any])
        case l2capPublished(CBL2CAPPSM, (any Error)?)
        case l2capUnpublished(CBL2CAPPSM, (any Error)?)
        case l2capChannelOpened(CBL2CAPChannel?, (any Error)?)
    }

    /// The delegate of the `CBPeripheralManager`: it posts each callback, in the order
    /// CoreBluetooth delivers them on the manager's queue, to the ``CallbackInbox`` that
    /// ``CoreBluetoothPeripheralManager`` consumes.
    ///
    /// Only type-checked on Linux (against the stub); it runs only with Apple's CoreBluetooth.
    final class PeripheralManagerDelegate: NSObject, CBPeripheralManagerDelegate {
        let inbox: CallbackInbox<PeripheralCallback>

        init(inbox: CallbackInbox<PeripheralCallback>) {
            self.inbox = inbox
            super.init()
        }

        func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
            inbox.post(.stateUpdated(peripheral.state))
        }

        func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?) {
            inbox.post(.startedAdvertising(error))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?) {
            inbox.post(.added(service, error))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic
        ) {
            inbox.post(.subscribed(central, characteristic))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic
        ) {
            inbox.post(.unsubscribed(central, characteristic))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
            inbox.post(.readRequest(request))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
            inbox.post(.writeRequests(requests))
        }

        func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
            inbox.post(.readyToUpdateSubscribers)
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, willRestoreState dict: [String: Any]) {
            inbox.post(.willRestoreState(dict))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, didPublishL2CAPChannel psm: CBL2CAPPSM, error: (any Error)?
        ) {
            inbox.post(.l2capPublished(psm, error))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, didUnpublishL2CAPChannel psm: CBL2CAPPSM, error: (any Error)?
        ) {
            inbox.post(.l2capUnpublished(psm, error))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didOpen channel: CBL2CAPChannel?, error: (any Error)?)
        {
            inbox.post(.l2capChannelOpened(channel, error))
        }
    }
#endif
