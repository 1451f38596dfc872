import PostgresNIO

/// Readable text for database errors in logs and CLI output. PSQLError's own
/// description is deliberately vague; the server's message is what helps.
public enum PostgresErrorText {
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + code
            }
            return "\(error.code)"
        }
        return String(describing: error)
    }
}
