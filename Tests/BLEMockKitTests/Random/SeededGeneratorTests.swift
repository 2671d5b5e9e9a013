import Testing

@testable import BLEMockKit

/// Golden values and stream properties of ``SeededGenerator``.
///
/// The golden values were computed once by this implementation after its core had been
/// checked against an independent reference (a from-the-paper Python SplitMix64 +
/// xoshiro256** that reproduces the published vectors pinned in the first two tests).
/// They must never change: traces recorded by users depend on them.
@Suite("SeededGenerator", .timeLimit(.minutes(10)))
struct SeededGeneratorTests {
    private func firstOutputs(_ generator: SeededGenerator, count: Int = 8) -> [UInt64] {
        var generator = generator
        return (0..<count).map { _ in generator.next() }
    }

    @Test("SplitMix64 reproduces the published vector for state 1234567")
    func splitMixPublishedVector() {
        var generator = SplitMix64(state: 1_234_567)
        #expect(generator.next() == 6_457_827_717_110_365_317)
        #expect(generator.next() == 3_203_168_211_198_807_973)
        #expect(generator.next() == 9_817_491_932_198_370_423)
    }

    @Test("The xoshiro256** core reproduces the published outputs for state 1, 2, 3, 4")
    func xoshiroPublishedVector() {
        let generator = SeededGenerator(seed: 0, state: (1, 2, 3, 4))
        #expect(firstOutputs(generator, count: 4) == [11520, 0, 1_509_978_240, 1_215_971_899_390_074_240])
    }

    @Test("Seed 0 expands to a non-zero state and a non-degenerate sequence")
    func seedZeroIsNotDegenerate() {
        let generator = SeededGenerator(seed: 0)
        #expect(
            generator.state == (
                0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F, 0xF88B_B8A8_724C_81EC
            ))
        let outputs = firstOutputs(generator, count: 64)
        #expect(Set(outputs).count == 64)
        #expect(!outputs.contains(0))
    }

    static let goldenTable: [(seed: UInt64, outputs: [UInt64])] = [
        (
            0,
            [
                0x99EC_5F36_CB75_F2B4, 0xBF6E_1F78_4956_452A, 0x1A5F_849D_4933_E6E0, 0x6AA5_94F1_262D_2D2C,
                0xBBA5_AD4A_1F84_2E59, 0xFFEF_8375_D9EB_CACA, 0x6C16_0DEE_D2F5_4C98, 0x8920_AD64_8FC3_0A3F,
            ]
        ),
        (
            1,
            [
                0xB3F2_AF6D_0FC7_10C5, 0x853B_5596_4736_4CEA, 0x92F8_9756_082A_4514, 0x642E_1C7B_C266_A3A7,
                0xB27A_48E2_9A23_3673, 0x24C1_2312_6FFD_A722, 0x1230_04EF_8DF5_10E6, 0x6195_4DCC_47B1_E89D,
            ]
        ),
        (
            42,
            [
                0x1578_0B2E_0C2E_C716, 0x6104_D986_6D11_3A7E, 0xAE17_5332_39E4_99A1, 0xECB8_AD47_03B3_60A1,
                0xFDE6_DC7F_E2EC_5E64, 0xC50D_A531_0179_5238, 0xB821_5485_5A65_DDB2, 0xD99A_2743_EBE6_0087,
            ]
        ),
        (
            .max,
            [
                0x8F55_20D5_2A7E_AD08, 0xC476_A018_CAA1_802D, 0x81DE_31C0_D260_469E, 0xBF65_8D7E_065F_3C2F,
                0x9135_93FD_A1BC_A32A, 0xBB53_5E93_941B_A525, 0x5ECD_A415_C3C6_DFDE, 0xC487_398F_C9DE_9AE2,
            ]
        ),
    ]

    @Test("The first eight outputs are pinned for seeds 0, 1, 42 and UInt64.max", arguments: goldenTable)
    func goldenOutputs(seed: UInt64, expected: [UInt64]) {
        let generator = SeededGenerator(seed: seed)
        #expect(generator.seed == seed)
        #expect(firstOutputs(generator) == expected, "seed \(seed)")
    }

    @Test("FNV-1a 64 matches its published value for \"a\" and the empty string")
    func fnvPublishedValues() {
        #expect(SeededGenerator.fnv1a64("".utf8) == 0xCBF2_9CE4_8422_2325)
        #expect(SeededGenerator.fnv1a64("a".utf8) == 0xAF63_DC4C_8601_EC8C)
    }

    @Test("Derived streams of seed 42 are pinned, including nested and numbered ones")
    func goldenDerivedStreams() {
        let root = SeededGenerator(seed: 42)
        let peripheral1 = root.derived("peripheral-1")
        #expect(peripheral1.seed == 0xB184_A559_2F6E_F387)
        #expect(
            firstOutputs(peripheral1, count: 4) == [
                0x9AA3_2010_4695_7C34, 0x2C54_8A9D_8D36_0BFB, 0x7F97_A6F8_3F4F_2FA6, 0x53B8_5977_F5DD_D977,
            ])
        let peripheral2 = root.derived("peripheral-2")
        #expect(peripheral2.seed == 0x0F7E_26D5_7195_390E)
        #expect(firstOutputs(peripheral2, count: 2) == [0xBDAF_7D43_2C36_078F, 0x4E60_3C51_DE2F_8D4E])
        let mtu = root.derived("peripheral-1").derived("mtu")
        #expect(mtu.seed == 0xA181_8BB5_0094_6B5C)
        #expect(firstOutputs(mtu, count: 2) == [0x8756_8867_944B_9058, 0x882D_35EB_86EC_7602])
        #expect(root.derived("").seed == 0x8657_CFAD_81FC_D2A4)
        #expect(root.derived(3) == root.derived("3"))
        #expect(root.derived(3).seed == 0x400E_3C61_E82F_E183)
    }

    @Test(
        "A numbered stream hashes the number's decimal digits, as its string would",
        arguments: [0, 1, 9, 10, 11, 99, 100, 12_345, 1_000_000_000, UInt64.max / 10, UInt64.max - 1, UInt64.max]
            as [UInt64])
    func numberedStreamsHashDecimalDigits(index: UInt64) {
        #expect(SeededGenerator.fnv1a64(decimalDigitsOf: index) == SeededGenerator.fnv1a64(String(index).utf8))
        let root = SeededGenerator(seed: 42)
        #expect(root.derived(index) == root.derived(String(index)))
    }

    @Test("Deriving neither reads nor advances the parent's state")
    func derivingDoesNotTouchParent() {
        var parent = SeededGenerator(seed: 7)
        let before = parent
        let child = parent.derived("radio")
        #expect(parent == before)
        _ = parent.next()
        _ = parent.next()
        #expect(parent.derived("radio") == child)
        var untouched = SeededGenerator(seed: 7)
        _ = untouched.next()
        _ = untouched.next()
        #expect(parent == untouched)
    }

    @Test("Different names, roots and nesting give different sequences")
    func derivedStreamsAreIndependent() {
        let root = SeededGenerator(seed: 42)
        let names = ["peripheral-1", "peripheral-2", "central", "mtu", "", "Peripheral-1", "peripheral-10"]
        var heads = Set<[UInt64]>()
        for name in names { heads.insert(firstOutputs(root.derived(name), count: 4)) }
        heads.insert(firstOutputs(root, count: 4))
        heads.insert(firstOutputs(root.derived("peripheral-1").derived("mtu"), count: 4))
        heads.insert(firstOutputs(root.derived("mtu").derived("peripheral-1"), count: 4))
        heads.insert(firstOutputs(SeededGenerator(seed: 43).derived("peripheral-1"), count: 4))
        #expect(heads.count == names.count + 4)
    }

    @Test("Re-creating a generator from a derived seed reproduces the derived stream")
    func derivedSeedReproducesStream() {
        let child = SeededGenerator(seed: 99).derived("scan").derived(5)
        #expect(SeededGenerator(seed: child.seed) == child)
    }

    @Test("Equal seeds give equal, hashable generators that stay in step")
    func equalSeedsStayInStep() {
        var first = SeededGenerator(seed: 0xDEAD_BEEF)
        var second = SeededGenerator(seed: 0xDEAD_BEEF)
        for _ in 0..<1000 { #expect(first.next() == second.next()) }
        #expect(first == second)
        #expect(Set([first, second]).count == 1)
    }

    @Test("The generator works with standard library APIs that take a RandomNumberGenerator")
    func worksWithStandardLibrary() {
        var generator = SeededGenerator(seed: 1)
        let shuffled = (0..<10).shuffled(using: &generator)
        #expect(shuffled.sorted() == Array(0..<10))
        #expect((1...6).contains(Int.random(in: 1...6, using: &generator)))
    }
}
