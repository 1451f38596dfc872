/// An error of a layer below HTTP (the database) that says what its caller
/// is answered, so the HTTP layer turns it into a response without knowing
/// that layer's types.
public protocol GatewayErrorConvertible: Error {
    var gatewayAnswer: GatewayErrorAnswer { get }
}

/// What a ``GatewayErrorConvertible`` error is answered with.
public enum GatewayErrorAnswer {
    /// Answer `error`. When the answer hides what happened (a 500, a lost
    /// database), `log` is the line for the operator's log, at error level.
    case answer(GatewayError, log: (message: String, detail: String)? = nil)
    /// Answer as `cause` is answered: this error only wraps it (a
    /// transaction that failed because its body threw).
    case sameAs(any Error)
}
