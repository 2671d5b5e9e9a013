// Stand-ins for the nRF Blinky example's two view controllers (its storyboard and UIKit views do
// not exist on Linux): they keep exactly the Bluetooth flow the real ones drive, which is what
// Nordic's tests exercise. The scanner creates the app's BlinkyManager when it loads, scans while
// powered on, and opens the device screen when a device is selected or connects; the device
// screen connects when it appears, turns the LED on and off from its switch, and disconnects
// when it disappears. Written for scripts/nordic-example-tests.sh; not Nordic's code.
@_exported import UIKit

final class ScannerTableViewController: UIViewController {
    private var manager: BlinkyManager!

    override func viewDidLoad() {
        super.viewDidLoad()
        let mock = (UIApplication.shared.delegate as! AppDelegate).mockingEnabled
        manager = BlinkyManager(mock)
        _ = manager.onStateChange { [unowned self] state in
            if state == .poweredOn { self.startScan() }
        }
        _ = manager.onBlinkyDiscovery { _ in }
        _ = manager.onBlinkyConnected { [unowned self] blinky in
            self.stopScan()
            self.open(blinky)
        }
        _ = NotificationCenter.default.addObserver(forName: .selection, object: nil, queue: nil) {
            [unowned self] notification in
            guard let blinky = notification.object as? BlinkyPeripheral else { return }
            self.stopScan()
            self.open(blinky)
        }
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        manager.reset()
    }

    override func viewDidAppear(_ animated: Bool) {
        super.viewDidAppear(animated)
        startScan()
    }

    private func startScan() { _ = manager.startScan() }

    private func stopScan() { manager.stopScan() }

    private func open(_ blinky: BlinkyPeripheral) {
        let screen = BlinkyViewController()
        screen.blinky = blinky
        navigationController?.pushViewController(screen, animated: true)
    }
}

extension Notification.Name {
    static let selection = Notification.Name("Selection")
}

extension Notification {
    static func selectPeripheral(_ blinky: BlinkyPeripheral) -> Notification {
        Notification(name: .selection, object: blinky)
    }
}

final class BlinkyViewController: UIViewController {
    let ledToggleSwitch = UISwitch()
    private var observers: [NSObjectProtocol] = []

    var blinky: BlinkyPeripheral! {
        didSet { title = blinky.advertisedName }
    }

    func ledToggleSwitchDidChange(_ sender: UISwitch) {
        if sender.isOn { blinky.turnOnLED() } else { blinky.turnOffLED() }
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        observers = [
            blinky.onReady { [unowned self] ledSupported, buttonSupported in
                self.ledToggleSwitch.isEnabled = ledSupported
                if !ledSupported && !buttonSupported { self.blinky.disconnect() }
            },
            blinky.onLedStateDidChange { [weak self] isOn in
                DispatchQueue.main.async { self?.ledToggleSwitch.setOn(isOn == true, animated: true) }
            },
            blinky.onDisconnected { [weak self] _ in
                DispatchQueue.main.async { self?.ledToggleSwitch.isEnabled = false }
            },
        ]
    }

    override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        guard !blinky.isConnected else { return }
        blinky.connect()
    }

    override func viewDidDisappear(_ animated: Bool) {
        for observer in observers { blinky.dispose(observer) }
        observers.removeAll()
        blinky.disconnect()
        super.viewDidDisappear(animated)
    }
}
