/// "Did you mean …?" for `mockble`: the known word closest to a mistyped one.
///
/// A word is a likely typo of a known one when a few edits turn one into the other (an edit
/// is an inserted, deleted or replaced character, or two neighbours swapped: `rnu` is one
/// edit from `run`), or when it starts exactly one known word (`fix` for `fixtures`).
enum Suggestion {
    /// The known word `word` most likely stands for, or `nil` when none is close.
    ///
    /// Ties go to the word listed first in `candidates`.
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let typed = word.lowercased()
        let allowed = max(1, min(3, typed.count / 3))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, candidate.lowercased())
            if distance <= allowed, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        if let best { return best.candidate }
        let extended = candidates.filter { $0.lowercased().hasPrefix(typed) }
        return typed.count >= 2 && extended.count == 1 ? extended[0] : nil
    }

    /// `; did you mean `word`?` for the known word nearest `word`, or the empty string.
    static func clause(for word: String, among candidates: [String]) -> String {
        nearest(to: word, among: candidates).map { "; did you mean `\($0)`?" } ?? ""
    }

    /// How many edits turn `source` into `target`: insertions, deletions, replacements, and
    /// swaps of two neighbouring characters, each counting one (the "optimal string
    /// alignment" distance).
    static func editDistance(_ source: String, _ target: String) -> Int {
        let source = Array(source)
        let target = Array(target)
        if source.isEmpty { return target.count }
        if target.isEmpty { return source.count }
        // rows[i][j]: the distance between the first i characters of source and the first j of target.
        var rows = [Array(0...target.count)]
        for i in 1...source.count {
            var row = [i]
            for j in 1...target.count {
                let same = source[i - 1] == target[j - 1]
                var distance = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + (same ? 0 : 1))
                if i > 1, j > 1, source[i - 1] == target[j - 2], source[i - 2] == target[j - 1] {
                    distance = min(distance, rows[i - 2][j - 2] + 1)
                }
                row.append(distance)
            }
            rows.append(row)
        }
        return rows[source.count][target.count]
    }
}
