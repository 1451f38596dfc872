import Synchronization

/// Metric handles (a counter, a timer) made once for each set of labels and
/// kept. Making one through the metrics factory takes the factory's lock,
/// checks the name and the labels and allocates; on the token path that
/// cost every request more than counting itself. The labels must be
/// bounded (routes, statuses, reasons, apps): one handle is kept for each.
public final class MetricHandles<Labels: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let made = Mutex<[Labels: Handle]>([:])
    private let make: @Sendable (Labels) -> Handle

    /// `make` makes the handle for labels not seen before.
    public init(_ make: @escaping @Sendable (Labels) -> Handle) {
        self.make = make
    }

    public subscript(labels: Labels) -> Handle {
        made.withLock { made in
            if let known = made[labels] { return known }
            let handle = make(labels)
            made[labels] = handle
            return handle
        }
    }
}
