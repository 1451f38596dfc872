import Foundation
@testable import GatewayCore
import GatewayTestSupport
import Testing

@Suite struct KeyMaterialTests {
    @Test(arguments: ["pkcs1", "pkcs8"])
    func importsOpenSSLKeysInBothPEMForms(_ format: String) async throws {
        let pem = try await TestKeys.opensslPEM(format: format)
        #expect(pem.contains(format == "pkcs1" ? "BEGIN RSA PRIVATE KEY" : "BEGIN PRIVATE KEY"))
        let pair = try RSAKeyPair(pem: pem)
        #expect(pair.bits == 2048)
        #expect(pair.publicKeyPEM.contains("BEGIN PUBLIC KEY"))
        // The stored form reads back as the same key.
        #expect(try RSAKeyPair(pem: pair.privateKeyPEM).publicKeyPEM == pair.publicKeyPEM)
    }

    @Test func refusesKeysUnder2048Bits() async throws {
        let pem = try await TestKeys.opensslPEM(format: "pkcs8", bits: 1024)
        #expect(throws: GatewayError.invalidRequest("private_key_pem is a 1024-bit key; at least 2048 bits are required.")) {
            try RSAKeyPair(pem: pem)
        }
    }

    @Test(arguments: [
        "", "hello", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n",
    ])
    func refusesWhatIsNotAnRSAPrivateKeyWithoutEchoingIt(_ pem: String) {
        do {
            _ = try RSAKeyPair(pem: pem)
            Issue.record("accepted \(pem)")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(!pem.isEmpty ? !error.message.contains(pem) : true)
        }
    }

    /// What an operator may not import; a stored key of such a kind still opens.
    @Test func importRefusesTwoBlocksKeysOver4096BitsAndSmallExponents() async throws {
        let normal = try await TestKeys.opensslPEM(format: "pkcs8")
        #expect(try RSAKeyPair.imported(pem: normal).bits == 2048)
        #expect(throws: GatewayError.invalidRequest("private_key_pem must hold exactly one PEM block.")) {
            try RSAKeyPair.imported(pem: normal + normal)
        }
        let big = try await TestKeys.opensslPEM(format: "pkcs8", bits: 4160)
        #expect(throws: GatewayError.invalidRequest("private_key_pem is a 4160-bit key; at most 4096 bits are accepted.")) {
            try RSAKeyPair.imported(pem: big)
        }
        let smallExponent = try await OpenSSL.generatedPEM(
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_pubexp:3"])
        #expect(
            throws: GatewayError.invalidRequest("private_key_pem's public exponent must be odd and at least 65537 (use 65537).")
        ) { try RSAKeyPair.imported(pem: smallExponent) }
        #expect(try RSAKeyPair(pem: smallExponent).bits == 2048)
        #expect(try RSAKeyPair(pem: big).bits == 4160)
    }

    @Test func thePublicExponentMustBeOddAndAtLeast65537() {
        #expect(RSAKeyPair.isAcceptablePublicExponent([0x01, 0x00, 0x01]))
        #expect(RSAKeyPair.isAcceptablePublicExponent([0x00, 0x00, 0x01, 0x00, 0x01]))
        #expect(RSAKeyPair.isAcceptablePublicExponent([0x01, 0x00, 0x00, 0x00, 0x01]))
        #expect(!RSAKeyPair.isAcceptablePublicExponent([0x03]))
        #expect(!RSAKeyPair.isAcceptablePublicExponent([0x00, 0xFF, 0xFF]))
        #expect(!RSAKeyPair.isAcceptablePublicExponent([0x01, 0x00, 0x00]))
        #expect(!RSAKeyPair.isAcceptablePublicExponent([0x01, 0x00, 0x00, 0x00, 0x00]))
        #expect(!RSAKeyPair.isAcceptablePublicExponent([]))
    }

    @Test func refusesAnECKey() async throws {
        let pem = try await OpenSSL.generatedPEM(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        #expect(throws: GatewayError.self) { try RSAKeyPair(pem: pem) }
    }

    @Test func generatesOnlyTheOfferedSizes() {
        #expect(throws: GatewayError.self) { try RSAKeyPair.generate(bits: 1024) }
        #expect(throws: GatewayError.self) { try RSAKeyPair.generate(bits: 2049) }
    }

    @Test func theMasterKeySealsForOneContextOnly() throws {
        let masterKey = try MasterKey(base64: MasterKey.generateBase64())
        let sealed = try masterKey.seal(Data("secret".utf8), context: "app_keys:a:1")
        #expect(!sealed.contains(Data("secret".utf8)))
        #expect(try masterKey.open(sealed, context: "app_keys:a:1") == Data("secret".utf8))
        #expect(throws: (any Error).self) { try masterKey.open(sealed, context: "app_keys:a:2") }

        let otherKey = try MasterKey(base64: MasterKey.generateBase64())
        #expect(throws: (any Error).self) { try otherKey.open(sealed, context: "app_keys:a:1") }

        var flipped = sealed
        flipped[flipped.count - 1] ^= 1
        #expect(throws: (any Error).self) { try masterKey.open(flipped, context: "app_keys:a:1") }
    }

    @Test func duringARotationTheNewKeySealsAndBothOpen() throws {
        let old = try MasterKey(base64: MasterKey.generateBase64())
        let new = try MasterKey(base64: MasterKey.generateBase64())
        let rotating = new.addingPrevious(old)
        let underOld = try old.seal(Data("old".utf8), context: "c")
        let underNew = try rotating.seal(Data("new".utf8), context: "c")

        #expect(rotating.hasPrevious && !new.hasPrevious)
        #expect(try rotating.open(underOld, context: "c") == Data("old".utf8))
        #expect(try rotating.open(underNew, context: "c") == Data("new".utf8))
        // What the rotating key seals is under the new key alone.
        #expect(try new.open(underNew, context: "c") == Data("new".utf8))
        #expect(throws: (any Error).self) { try old.open(underNew, context: "c") }
        #expect(!rotating.opensWithCurrentKey(underOld, context: "c"))
        #expect(rotating.opensWithCurrentKey(underNew, context: "c"))
        // The context binding holds for the previous key too.
        #expect(throws: (any Error).self) { try rotating.open(underOld, context: "d") }
    }

    @Test(arguments: ["", "c2hvcnQ=", "not base64!", Data(count: 31).base64EncodedString(), Data(count: 33).base64EncodedString()])
    func theMasterKeyMustBe32Base64Bytes(_ text: String) {
        #expect(throws: GatewayError.self) { try MasterKey(base64: text) }
    }

    @Test func constantTimeEqualityAnswersEquality() {
        #expect(ConstantTime.equals("wonderland", "wonderland"))
        #expect(!ConstantTime.equals("wonderland", "wonderlanD"))
        #expect(!ConstantTime.equals("wonderland", "wonderland "))
        #expect(!ConstantTime.equals("", "x"))
    }
}
