import BLECore

extension TimelinePage {
    /// Where the rows and lanes go, in whole pixels (so the page's bytes never depend on
    /// floating-point formatting).
    ///
    /// Time runs down, but not to scale: each row has its own height; between two rows the
    /// space grows with the virtual time between them (``pixelsPerSecond``) up to
    /// ``longestGap``, and a longer stretch is drawn at that height, marked as cut.
    struct Layout {
        /// Where the first row starts, below the lane headings.
        static let top = 70
        /// The right edge of the time labels.
        static let axisRight = 78
        /// The step column.
        static let stepLeft = 88
        static let stepWidth = 262
        /// The first lane's line, and the distance between lanes.
        static let firstLane = 440
        static let laneSpacing = 440
        /// Room right of the last lane, for its notes.
        static let rightMargin = 440
        /// Pixels per second of virtual time between rows (0.4 px per millisecond).
        static let pixelsPerSecond = 400
        /// The most space between two rows; a longer stretch of time is cut.
        static let longestGap = 34
        /// Space between two steps' regions.
        static let stepSpacing = 5

        /// A stretch of time drawn shorter than it was.
        struct Cut: Hashable {
            /// The top of the space it is drawn in, and that space's height.
            var y: Int
            var height: Int
            /// How long it was.
            var duration: Duration
        }

        /// The top of each row.
        private(set) var y: [Int] = []
        private(set) var cuts: [Cut] = []
        /// The bottom of the last row, plus a margin.
        private(set) var height = top + 20
        let width: Int

        init(rows: [Row], laneCount: Int) {
            width = Self.firstLane + max(0, laneCount - 1) * Self.laneSpacing + Self.rightMargin
            var bottom = Self.top
            for (index, row) in rows.enumerated() {
                var top = bottom
                if index > 0 {
                    let previous = rows[index - 1]
                    if previous.step != row.step { top += Self.stepSpacing }
                    let elapsed = max(.zero, row.time - previous.time)
                    let wanted = Self.pixels(elapsed)
                    if wanted > Self.longestGap {
                        cuts.append(Cut(y: top, height: Self.longestGap, duration: elapsed))
                    }
                    top += min(wanted, Self.longestGap)
                }
                y.append(top)
                bottom = top + row.height
            }
            height = bottom + 24
        }

        /// The x of a lane's line.
        static func laneX(_ lane: Int) -> Int { firstLane + lane * laneSpacing }

        /// The pixels a stretch of virtual time would take at full scale (rounded down).
        static func pixels(_ duration: Duration) -> Int {
            let (seconds, attoseconds) = duration.saturatingComponents
            guard seconds < 1_000_000 else { return .max / 2 }
            return Int(seconds) * pixelsPerSecond + Int(attoseconds / 1_000_000_000_000_000) * pixelsPerSecond / 1000
        }
    }
}
