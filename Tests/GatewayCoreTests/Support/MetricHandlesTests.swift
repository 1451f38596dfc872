import GatewayCore
import Synchronization
import Testing

/// A handle is made once for its labels and the same one is given back
/// after, from any number of tasks at once; other labels get their own.
@Suite struct MetricHandlesTests {
    final class Handle: Sendable {
        let labels: String
        init(_ labels: String) { self.labels = labels }
    }

    @Test func eachLabelsHandleIsMadeOnceAndKept() async {
        let made = Mutex<[String]>([])
        let handles = MetricHandles<String, Handle> { labels in
            made.withLock { $0.append(labels) }
            return Handle(labels)
        }
        let first = handles["GET /a 200"]
        let given = await withTaskGroup(of: [ObjectIdentifier].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<100).map { ObjectIdentifier(handles[$0.isMultiple(of: 2) ? "GET /a 200" : "GET /b 404"]) } }
            }
            return await group.reduce(into: Set<ObjectIdentifier>()) { $0.formUnion($1) }
        }
        #expect(given.count == 2)
        #expect(given.contains(ObjectIdentifier(first)))
        #expect(handles["GET /b 404"].labels == "GET /b 404")
        #expect(made.withLock { $0 }.sorted() == ["GET /a 200", "GET /b 404"])
    }
}
