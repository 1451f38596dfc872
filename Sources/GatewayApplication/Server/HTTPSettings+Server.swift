import GatewayHTTP
import HummingbirdCore
import NIOCore

extension HTTPSettings {
    /// HTTP/1 with the idle timeout and, unless it is off, the slowest body
    /// rate accepted (``RequestBodyRateGuard``).
    var serverBuilder: HTTPServerBuilder {
        .http1(
            configuration: .init(
                additionalChannelHandlers: [
                    HTTP1HandlersInstaller(
                        bodyRate: minimumBodyBytesPerSecond == 0
                            ? nil
                            : RequestBodyRateGuard.Rule(
                                bytesPerSecond: minimumBodyBytesPerSecond,
                                grace: .seconds(Int64(minimumBodyRateGraceSeconds))))
                ],
                idleTimeout: .seconds(Int64(idleTimeoutSeconds))))
    }
}
