/// A first-in, first-out queue: an array read from a moving head. Appending and taking are
/// amortised O(1) without shifting elements on every take; the taken prefix is dropped once
/// the queue empties, or once it is more than half the array.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    /// The number of elements waiting.
    var count: Int { items.count - head }
    /// Whether nothing waits.
    var isEmpty: Bool { head == items.count }
    /// The oldest element, if any.
    var first: Element? { head < items.count ? items[head] : nil }
    /// The elements waiting, oldest first.
    var waiting: ArraySlice<Element> { items[head...] }

    /// Makes room for `minimumCapacity` elements before the storage grows.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        items.reserveCapacity(minimumCapacity)
    }

    /// Adds an element after everything already waiting.
    mutating func append(_ element: Element) {
        items.append(element)
    }

    /// Takes the oldest element.
    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        if head == items.count - 1 {
            // The last one waiting (nearly always the only one): moved out rather than copied
            // and then destroyed with the storage's other spent elements.
            let element = items.removeLast()
            removeAll()
            return element
        }
        let element = items[head]
        head += 1
        if head == items.count {
            removeAll()
        } else if head > 32, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Takes the element `offset` places behind the oldest (0 is the oldest), keeping the
    /// order of the others.
    mutating func remove(atOffset offset: Int) -> Element {
        offset == 0 ? popFirst()! : items.remove(at: head + offset)
    }

    /// Takes every element waiting, oldest first.
    mutating func takeAll() -> [Element] {
        defer { removeAll() }
        return Array(waiting)
    }

    /// Removes every element, keeping the storage for the next ones.
    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Removes the waiting elements for which `shouldRemove` is true, keeping the order of the others.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        items = items[head...].filter { !shouldRemove($0) }
        head = 0
    }
}

extension FIFO: Sendable where Element: Sendable {}
