/// Counts with their nouns in agreement, for everything `mockble` prints: `1 service`,
/// `2 services`, `0 steps`.
///
/// Pass the singular; the plural is the regular one (`step` → `steps`, `entry` → `entries`,
/// `match` → `matches`) unless `plural` gives another.
enum Plural {
    /// `count`, a space, and the noun that agrees with it: `1 service`, `2 services`.
    static func count(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + noun(for: count, singular, plural: plural)
    }

    /// The noun that agrees with `count`: the singular for exactly one, else the plural.
    static func noun(for count: Int, _ singular: String, plural: String? = nil) -> String {
        count == 1 ? singular : plural ?? regular(singular)
    }

    /// The regular English plural of `singular`: `-ies` after a consonant and `y`, `-es` after
    /// `s`, `x`, `z`, `ch` and `sh`, else `-s`.
    static func regular(_ singular: String) -> String {
        let vowels: Set<Character> = ["a", "e", "i", "o", "u"]
        if singular.hasSuffix("y"), let before = singular.dropLast().last, !vowels.contains(before) {
            return singular.dropLast() + "ies"
        }
        if ["s", "x", "z", "ch", "sh"].contains(where: { singular.hasSuffix($0) }) {
            return singular + "es"
        }
        return singular + "s"
    }
}
