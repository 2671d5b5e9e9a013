/// BLECoreBluetooth: the role protocols of BLECore backed by Apple's CoreBluetooth.
///
/// The CoreBluetooth-backed types exist only where CoreBluetooth does (`#if canImport(CoreBluetooth)`);
/// the bookkeeping they rely on is platform-independent and tested everywhere.
public enum BLECoreBluetooth {}
