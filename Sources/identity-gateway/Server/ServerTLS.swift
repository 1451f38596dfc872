import NIOSSL

/// Native TLS on the HTTP listener, for deployments without a terminating
/// proxy: a PEM certificate chain (leaf first) and its PEM private key, read
/// and checked once at start. TLS 1.2 is the oldest version offered, and
/// with it only Mozilla's "intermediate" suites: ECDHE key exchange with
/// AES-GCM or ChaCha20-Poly1305, no CBC (LUCKY13), no RSA key exchange (no
/// forward secrecy). TLS 1.3's suites are all AEAD already.
enum ServerTLS {
    /// The TLS 1.2 suites offered, in OpenSSL's names, strongest first.
    static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ]

    /// The server configuration, or a message naming what is wrong with the files.
    static func configuration(certificateFile: String, keyFile: String) throws(ConfigurationProblems) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw ConfigurationProblems([
                "http.tls.certificate_file (GATEWAY_HTTP_TLS_CERTIFICATE_FILE): cannot read a PEM certificate chain from \(certificateFile)"
            ])
        }
        guard !chain.isEmpty else {
            throw ConfigurationProblems([
                "http.tls.certificate_file (GATEWAY_HTTP_TLS_CERTIFICATE_FILE): \(certificateFile) holds no PEM certificate"
            ])
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw ConfigurationProblems([
                "http.tls.key_file (GATEWAY_HTTP_TLS_KEY_FILE): cannot read a PEM private key from \(keyFile)"
            ])
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = tls12CipherSuites.joined(separator: ":")
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationProblems([
                "http.tls.key_file (GATEWAY_HTTP_TLS_KEY_FILE): the private key in \(keyFile) does not belong to the "
                    + "first certificate in \(certificateFile)"
            ])
        }
        return configuration
    }
}
