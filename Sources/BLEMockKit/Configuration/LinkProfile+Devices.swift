/// Named phones, development kits and accessories, each figure with its source.
///
/// Connection interval rules of iPhones come from Apple's Accessory Design Guidelines for
/// Apple Devices ("Connection Parameters"): a request may be rejected unless Interval Min is
/// at least 15 ms and a multiple of 15 ms, and Interval Max is at least 15 ms more (or both
/// are 15 ms); HID accessories may get 11.25 ms; without an accepted request iOS keeps its
/// default of 30 ms. The iPhone profiles answer requests by
/// ``IntervalRequestRule/intervalMinOrDefault``. (Summarised by Apple's engineer in the Apple Developer Forums thread
/// 773555, "Request for Suggestions to Improve BLE Throughput on iOS Devices", and by Silicon
/// Labs, "Selecting Suitable Connection Parameters for Apple Devices", which cites release
/// R11 of the guidelines; the 2013 edition, quoted on Apple's bluetooth-dev list, asked for
/// Interval Min ≥ 20 ms and Interval Max ≥ Interval Min + 20 ms.) The guidelines publish no
/// packet-per-event limit: those figures come from measurements, cited per profile.
extension LinkProfile {
    /// An iPhone on iOS 9 with a Bluetooth 4.0/4.1 controller (iPhone 6 and earlier): no data
    /// length extension (27-byte packets), LE 1M only, 4 packets per connection event, ATT_MTU
    /// 158, intervals of at least 20 ms (default 30 ms).
    ///
    /// Sources: Punch Through, "Maximizing BLE Throughput on iOS and Android" (2016): "with iOS
    /// you can send 4 packets per interval", iOS's default interval 30 ms, 20 bytes per
    /// notification at the default ATT_MTU; esysberlin/ble-guides, "Reverse Engineering
    /// reasoning for iOS BLE MTU sizes": ATT_MTU 158 before iOS 10. The throughput the article
    /// holds it to, 2,667 B/s (4 × 20 bytes per 30 ms), is Punch Through's arithmetic from
    /// those limits, not a separate measurement.
    public static let iPhoneiOS9 = LinkProfile(
        name: "iPhone 6, iOS 9", connectionIntervals: .milliseconds(20) ... .seconds(2),
        defaultConnectionInterval: .milliseconds(30), intervalRequestRule: .intervalMinOrDefault,
        maximumDataLength: 27, phys: [.le1M],
        packetsPerConnectionEvent: 4, attMTU: 158)

    /// An iPhone on iOS 10 with a Bluetooth 4.2 controller that does not do data length
    /// extension (iPhone 6s): 27-byte packets, LE 1M, 7 packets per connection event, ATT_MTU
    /// 185, intervals in multiples of 15 ms from 15 ms (default 30 ms).
    ///
    /// Sources: esysberlin/ble-guides, "Reverse Engineering reasoning for iOS BLE MTU sizes":
    /// iOS 10 negotiates ATT_MTU 185, and an air trace shows at most 7 packets per connection
    /// event (185 + 4 bytes of L2CAP header fill seven 27-byte packets); TI E2E thread 579877:
    /// an iPhone 6s rejects the LL_LENGTH_REQ (no data length extension) where an iPhone 7
    /// accepts 251 bytes. No published throughput measurement of this combination was found:
    /// the article's figure (one 182-byte notification per 15 ms event, 12,133 B/s) is this
    /// kit's derivation from these parameters.
    public static let iPhoneiOS10 = LinkProfile(
        name: "iPhone 6s, iOS 10", connectionIntervals: .milliseconds(15) ... .seconds(2),
        connectionIntervalStep: .milliseconds(15), defaultConnectionInterval: .milliseconds(30),
        intervalRequestRule: .intervalMinOrDefault, maximumDataLength: 27,
        phys: [.le1M], packetsPerConnectionEvent: 7, attMTU: 185)

    /// An iPhone 16 Pro on iOS 18: data length extension (251 bytes), LE 2M (LE 1M and coded
    /// S=8 listed too), 3 packets per connection event, an ATT_MTU offer of 517 (the
    /// peripheral's limit decides), intervals in multiples of 15 ms from 15 ms to 2 s (default
    /// 30 ms).
    ///
    /// Source: Apple Developer Forums thread 770717, "Core Bluetooth throughput issues": an
    /// iPhone 16 Pro Max on iOS 18.2 receiving notifications over LE 2M with 244-byte values
    /// at a 15 ms interval reaches "around 300-400 kbps". Apple publishes neither the packet
    /// limit nor its ATT_MTU offer: 3 packets per event is fitted to that measurement (3 × 244
    /// bytes per 15 ms is 390 kb/s), and the thread's 244-byte values show iOS 18 offers more
    /// than iOS 10's 185. (Thread 773555 reports an average of 5 packets per event across
    /// iPhones at an interval it does not state.)
    public static let iPhoneiOS18 = LinkProfile(
        name: "iPhone 16 Pro, iOS 18", connectionIntervals: .milliseconds(15) ... .seconds(2),
        connectionIntervalStep: .milliseconds(15), defaultConnectionInterval: .milliseconds(30),
        intervalRequestRule: .intervalMinOrDefault, maximumDataLength: 251,
        phys: [.le1M, .le2M, .leCodedS8], packetsPerConnectionEvent: 3, attMTU: 517)

    /// An nRF52840 development kit running Nordic's S140 SoftDevice with connection event
    /// length extension, either side of a link: data length 251, LE 2M (LE 1M and both coded
    /// PHYs listed too), no packet limit (an event lasts as long as the interval allows),
    /// ATT_MTU 247, asking for and defaulting to 50 ms.
    ///
    /// Source: Nordic Semiconductor's S140 SoftDevice Specification, "Bluetooth Low Energy
    /// data throughput": 1,327.5 kb/s of notifications over LE 2M with ATT_MTU 247 and data
    /// length 251 at a 50 ms interval (1,376.2 kb/s at 400 ms), measured between two nRF52
    /// devices, as quoted in CSDN's "BLE的传输速率" (blog.csdn.net/chengbaojin/article/details/124721522);
    /// ATT_MTU 247 with data length 251 is Nordic's recommended pairing (DevZone, "What is the
    /// max data throughput with S132 v3?").
    public static let nRF52840 = LinkProfile(
        name: "nRF52840 DK, S140", defaultConnectionInterval: .milliseconds(50),
        preferredConnectionIntervals: .milliseconds(50) ... .milliseconds(50), maximumDataLength: 251,
        phys: [.le1M, .le2M, .leCodedS2, .leCodedS8], attMTU: 247)

    /// An nRF52832 development kit running Nordic's S132 SoftDevice v3 with connection event
    /// length extension, either side of a link: data length 251, LE 1M only (S132 v3 predates
    /// LE 2M), no packet limit, ATT_MTU 247, asking for and defaulting to 50 ms.
    ///
    /// Source: Nordic DevZone, "What is the max data throughput with S132 v3?": a Nordic
    /// engineer reports reaching "just shy of 800kbps" between two nRF52 devices with ATT_MTU
    /// 247, data length 251 and event length extension, "preferably with a very long
    /// connection interval" (the interval is not stated; 50 ms is this kit's choice, and any
    /// interval from 50 ms up gives 781–791 kb/s here).
    public static let nRF52832 = LinkProfile(
        name: "nRF52832 DK, S132 v3", defaultConnectionInterval: .milliseconds(50),
        preferredConnectionIntervals: .milliseconds(50) ... .milliseconds(50), maximumDataLength: 251,
        phys: [.le1M], attMTU: 247)

    /// A Bluetooth 5 watch as a peripheral: asks for 15–30 ms (the shortest request Apple's
    /// guidelines accept), data length 251, LE 1M and 2M, ATT_MTU 247, no packet limit of its
    /// own. A typical nRF52-class design, not a measured product.
    public static let watch = LinkProfile(
        name: "Bluetooth 5 watch", defaultConnectionInterval: .milliseconds(30),
        preferredConnectionIntervals: .milliseconds(15) ... .milliseconds(30), maximumDataLength: 251,
        phys: [.le1M, .le2M], attMTU: 247)

    /// A Bluetooth 4.0/4.1 accessory as a peripheral: 27-byte packets, LE 1M only, the default
    /// ATT_MTU of 23, asking for 30–50 ms.
    public static let bluetooth4Accessory = LinkProfile(
        name: "Bluetooth 4.0 accessory", defaultConnectionInterval: .milliseconds(30),
        preferredConnectionIntervals: .milliseconds(30) ... .milliseconds(50), maximumDataLength: 27,
        phys: [.le1M], attMTU: 23)

    /// A device that limits nothing: every interval the specification allows (default 30 ms),
    /// no preference of its own, data length 251, every PHY, no packet limit, ATT_MTU 517. The
    /// side of a link whose profile is not set.
    public static let unconstrained = LinkProfile(name: "unconstrained")

    /// Every named profile with the name of its static property (for replay code).
    static let named: [(name: String, profile: LinkProfile)] = [
        ("iPhoneiOS9", .iPhoneiOS9), ("iPhoneiOS10", .iPhoneiOS10), ("iPhoneiOS18", .iPhoneiOS18),
        ("nRF52840", .nRF52840), ("nRF52832", .nRF52832), ("watch", .watch),
        ("bluetooth4Accessory", .bluetooth4Accessory),
        ("unconstrained", .unconstrained),
    ]

    /// The name of the static property this profile is (`"iPhoneiOS10"`), or `nil` for a
    /// profile of the caller's own: how replay code and scenario plans name it.
    var staticName: String? { Self.named.first { $0.profile == self }?.name }

    /// The named phones and development kits, as centrals (what an exploration draws from when
    /// told to draw profiles).
    public static let phones: [LinkProfile] = [.iPhoneiOS9, .iPhoneiOS10, .iPhoneiOS18, .nRF52840, .nRF52832]
}
