// A stand-in for the few UIKit types Nordic's nRF Blinky example and its tests touch, so that
// they build and run on Linux (scripts/nordic-example-tests.sh). Only what the app's Bluetooth
// flow depends on is modelled: the application and its delegate, a window, view controllers
// with their appearance callbacks, a navigation stack and a switch. Nothing is drawn.
@_exported import Foundation

/// The base of the app delegate.
open class UIResponder: NSObject {}

/// The app delegate's launch callback.
public protocol UIApplicationDelegate: AnyObject {
    var window: UIWindow? { get set }
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool
}

/// The application: its delegate, and a launch that does what iOS does before a hosted test
/// bundle runs (the delegate's launch callback, then the root view controller appears).
open class UIApplication {
    nonisolated(unsafe) public static let shared = UIApplication()
    public var delegate: (any UIApplicationDelegate)?

    public struct LaunchOptionsKey: Hashable, RawRepresentable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    /// Launches the app on the main thread: the delegate finishes launching, then the window's
    /// root view controller loads and appears.
    public func launch(delegate: any UIApplicationDelegate, rootViewController: UIViewController) {
        self.delegate = delegate
        _ = delegate.application(self, didFinishLaunchingWithOptions: nil)
        let window = UIWindow()
        window.rootViewController = rootViewController
        delegate.window = window
        rootViewController.loadViewIfNeeded()
        rootViewController.appear()
    }
}

/// The app's window.
open class UIWindow {
    public init() {}
    open var rootViewController: UIViewController?
}

/// A view controller's lifecycle, as UIKit calls it.
open class UIViewController: NSObject {
    private var loaded = false
    open var title: String?
    public internal(set) weak var navigationController: UINavigationController?

    public override init() { super.init() }

    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    open func viewDidAppear(_ animated: Bool) {}
    open func viewWillDisappear(_ animated: Bool) {}
    open func viewDidDisappear(_ animated: Bool) {}

    public func loadViewIfNeeded() {
        guard !loaded else { return }
        loaded = true
        viewDidLoad()
    }

    func appear() {
        viewWillAppear(true)
        viewDidAppear(true)
    }
}

/// A navigation stack: pushing and popping call the appearance callbacks in UIKit's order.
open class UINavigationController: UIViewController {
    public private(set) var viewControllers: [UIViewController] = []

    public init(rootViewController: UIViewController) {
        super.init()
        rootViewController.navigationController = self
        viewControllers = [rootViewController]
    }

    open var topViewController: UIViewController? { viewControllers.last }

    open override func viewDidLoad() {
        super.viewDidLoad()
        viewControllers.last?.loadViewIfNeeded()
    }

    open override func viewWillAppear(_ animated: Bool) {
        super.viewWillAppear(animated)
        viewControllers.last?.viewWillAppear(animated)
    }

    open override func viewDidAppear(_ animated: Bool) {
        super.viewDidAppear(animated)
        viewControllers.last?.viewDidAppear(animated)
    }

    open func pushViewController(_ viewController: UIViewController, animated: Bool) {
        let previous = viewControllers.last
        viewController.navigationController = self
        viewController.loadViewIfNeeded()
        previous?.viewWillDisappear(animated)
        viewController.viewWillAppear(animated)
        viewControllers.append(viewController)
        previous?.viewDidDisappear(animated)
        viewController.viewDidAppear(animated)
    }

    @discardableResult
    open func popViewController(animated: Bool) -> UIViewController? {
        guard viewControllers.count > 1, let top = viewControllers.popLast() else { return nil }
        let revealed = viewControllers.last
        top.viewWillDisappear(animated)
        revealed?.viewWillAppear(animated)
        top.viewDidDisappear(animated)
        revealed?.viewDidAppear(animated)
        return top
    }
}

/// An on/off switch.
open class UISwitch: NSObject {
    open var isOn = false
    open var isEnabled = true

    open func setOn(_ on: Bool, animated: Bool) { isOn = on }
}
