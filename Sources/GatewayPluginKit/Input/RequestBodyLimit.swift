import GatewayCore
package import Hummingbird
package import NIOCore

extension Request {
    /// The whole body, at most `maximumBytes`; 413 naming the limit beyond.
    /// A `Content-Length` that already says more is refused before any of the
    /// body is read, so a client that waits on `Expect: 100-continue`, or one
    /// about to upload megabytes, learns at once.
    package func readBody(upTo maximumBytes: Int) async throws -> ByteBuffer {
        let tooLarge = GatewayError(
            .payloadTooLarge, .tooLarge, "The request body exceeds the size limit of \(maximumBytes) bytes.")
        if let declared = headers[.contentLength].flatMap({ Int($0) }), declared > maximumBytes {
            throw tooLarge
        }
        do {
            return try await body.collect(upTo: maximumBytes)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
    }
}
