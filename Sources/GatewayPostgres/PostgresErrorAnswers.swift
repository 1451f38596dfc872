public import GatewayCore
public import PostgresNIO

/// What a caller is told when the database refuses or cannot be reached.
extension PSQLError: GatewayErrorConvertible {
    public var gatewayAnswer: GatewayErrorAnswer {
        switch serverInfo?[.sqlState] {
        case "23505", "23503":
            .answer(GatewayError(.conflict, .conflict, "That conflicts with what is stored (the id is taken or the parent is gone)."))
        case "22021", "22P05":
            // A character PostgreSQL cannot store (NUL) can only have come with the request.
            .answer(.invalidRequest("A value in the request holds a character that cannot be stored (NUL)."))
        case nil:
            .answer(.unavailable, log: ("database unreachable", String(reflecting: self)))
        default:
            .answer(.internalError, log: ("database error", String(reflecting: self)))
        }
    }
}

/// What went wrong inside the transaction is what matters to the caller.
extension TransactionError: GatewayErrorConvertible {
    public var gatewayAnswer: GatewayErrorAnswer {
        guard let cause: any Error = closureError ?? beginError ?? commitError else { return .answer(.unavailable) }
        return .sameAs(cause)
    }
}

/// A connection that had closed: the database was lost in the middle.
extension ConnectionClosed: GatewayErrorConvertible {
    public var gatewayAnswer: GatewayErrorAnswer { .answer(.unavailable, log: ("database unreachable", description)) }
}
