import Foundation
public import GatewayCore
import PostgresNIO
import CoreMetrics

/// What keeps one row PostgreSQL refuses from holding back the rows batched
/// with it. A data error (SQLSTATE class 22, data exception, or 23, integrity
/// violation) is about a value, not the connection: the writers then retry
/// the batch in halves until the refused rows stand alone, and a row refused
/// on its own is written once more as ``AuditEvent/storable``. Rows that needed this are counted in
/// `gateway_audit_rows_escaped_total`.
public enum UnstorableRow {
    static let escapedRowsCounter = Counter(label: "gateway_audit_rows_escaped_total")

    /// Whether `error` is PostgreSQL refusing a value rather than failing to answer.
    public static func isDataError(_ error: any Error) -> Bool {
        if let transaction = error as? TransactionError {
            // Refused inside a transaction that then rolled back cleanly.
            guard transaction.rollbackError == nil, let inner = transaction.closureError ?? transaction.commitError else {
                return false
            }
            return isDataError(inner)
        }
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23")
    }
}

extension AuditEvent {
    /// The event with every text a column holds made storable: control
    /// characters (U+0000 among them, which no PostgreSQL text can hold)
    /// replaced with U+FFFD, the user agent cut to its column's 256
    /// characters. What the boundary lets in never needs it; this is the
    /// writer's last resort for a row PostgreSQL refused.
    public var storable: AuditEvent {
        func clean(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map {
                $0.properties.generalCategory == .control ? "\u{FFFD}" : $0
            }))
        }
        var copy = self
        copy.event = clean(event)
        copy.reason = reason.map(clean)
        copy.userID = userID.map(clean)
        copy.credentialType = credentialType.map(clean)
        copy.userAgent = userAgent.map { String(clean($0).prefix(256)) }
        copy.requestID = clean(requestID)
        copy.detail = Dictionary(detail.map { (clean($0.key), clean($0.value)) }, uniquingKeysWith: { first, _ in first })
        return copy
    }
}
