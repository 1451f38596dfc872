import Synchronization
public import Tracing

/// The gateway's spans, made through swift-distributed-tracing's tracer.
///
/// A span is made only inside a traced request: the server span
/// (`ServerSpanMiddleware`) sets the task's `ServiceContext`, and work that
/// runs outside any request (the ledger's batches, the app-change listener,
/// audit maintenance) never starts a trace of its own. With tracing off no
/// server span is made, so nothing here costs more than one task-local read.
///
/// Attributes are chosen by the call site and never hold a credential, a
/// token, a nonce, a secret or a phone number; a user id only where the
/// operator asked for it (``recordsUserIDs``). An error is recorded by its
/// code or its type's name, never its text.
public enum Spans {
    /// Whether the running task serves a traced request.
    public static var areRecorded: Bool { ServiceContext.current != nil }

    /// Whether spans may carry the user id (`enduser.id`); off unless the operator turns it on.
    public static var recordsUserIDs: Bool {
        get { userIDs.withLock { $0 } }
        set { userIDs.withLock { $0 = newValue } }
    }

    /// Runs `body` in a child span of the current one, or without a span outside a traced request.
    public static func run<Result>(
        _ name: String, kind: SpanKind = .internal, attributes: @autoclosure () -> SpanAttributes = [:],
        isolation: isolated (any Actor)? = #isolation,
        _ body: (_ span: (any Span)?) async throws -> Result
    ) async throws -> Result {
        guard let span = start(name, kind: kind, attributes: attributes()) else { return try await body(nil) }
        defer { span.end() }
        do {
            return try await ServiceContext.$current.withValue(span.context) { try await body(span) }
        } catch {
            fail(span, error)
            throw error
        }
    }

    /// Starts a child span of the current one, which the caller ends; `nil` outside a traced request.
    public static func start(
        _ name: String, kind: SpanKind = .internal, attributes: @autoclosure () -> SpanAttributes = [:]
    ) -> (any Span)? {
        guard let parent = ServiceContext.current else { return nil }
        let span = InstrumentationSystem.tracer.startSpan(name, context: parent, ofKind: kind)
        span.attributes = attributes()
        return span
    }

    /// Records a span that began and ended at instants already past (a wait measured by whoever waited).
    public static func record(
        _ name: String, kind: SpanKind = .internal, from start: DefaultTracerClock.Instant,
        to end: @autoclosure () -> DefaultTracerClock.Instant, attributes: @autoclosure () -> SpanAttributes = [:]
    ) {
        guard let parent = ServiceContext.current else { return }
        let span = InstrumentationSystem.tracer.startSpan(name, context: parent, ofKind: kind, at: start)
        span.attributes = attributes()
        span.end(at: end())
    }

    /// Marks `span` failed with the error's code or type, never its text
    /// (which may quote what a client or a service sent).
    public static func fail(_ span: (any Span)?, _ error: any Error) {
        guard let span else { return }
        span.attributes["error.type"] = (error as? GatewayError)?.code.rawValue ?? String(describing: type(of: error))
        span.setStatus(SpanStatus(code: .error))
    }

    private static let userIDs = Mutex(false)
}
