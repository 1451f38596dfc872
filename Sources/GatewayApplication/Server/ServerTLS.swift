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

    /// The server configuration, or `nil` with what is wrong with the files
    /// noted against their keys in `settings`.
    static func configuration(certificateFile: String, keyFile: String, noting settings: SettingsReader) -> TLSConfiguration? {
        let (certificateKey, keyKey) = ("http.tls.certificate_file", "http.tls.key_file")
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            settings.note(certificateKey, "cannot read a PEM certificate chain from \(certificateFile)")
            return nil
        }
        guard !chain.isEmpty else {
            settings.note(certificateKey, "\(certificateFile) holds no PEM certificate")
            return nil
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            settings.note(keyKey, "cannot read a PEM private key from \(keyFile)")
            return nil
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = tls12CipherSuites.joined(separator: ":")
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            settings.note(
                keyKey, "the private key in \(keyFile) does not belong to the first certificate in \(certificateFile)")
            return nil
        }
        return configuration
    }
}
