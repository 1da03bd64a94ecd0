import CZeroMQ

/// A CURVE key pair in ZeroMQ's Z85 text form (40 characters each, RFC 32).
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// True when the loaded libzmq was built with CURVE (`zmq_has("curve")`).
    public static var isAvailable: Bool { zmq_has("curve") != 0 }

    /// A new random key pair (`zmq_curve_keypair`).
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicKey, &secretKey) == 0 else {
            throw ZeroMQError.last("zmq_curve_keypair")
        }
        return CurveKeyPair(
            publicKey: Self.text(publicKey), secretKey: Self.text(secretKey))
    }

    /// The pair of `secretKey`, its public key derived (`zmq_curve_public`).
    public init(secretKey: String) throws {
        guard Self.isKey(secretKey) else {
            throw ZeroMQError(code: EINVAL, operation: "a CURVE secret key is 40 Z85 characters")
        }
        var publicKey = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicKey, secretKey) == 0 else { throw ZeroMQError.last("zmq_curve_public") }
        self.init(publicKey: Self.text(publicKey), secretKey: secretKey)
    }

    private init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// True when `text` is a 32-byte key in Z85 form.
    public static func isKey(_ text: String) -> Bool {
        guard text.utf8.count == 40 else { return false }
        var decoded = [UInt8](repeating: 0, count: 32)
        return zmq_z85_decode(&decoded, text) != nil
    }

    private static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The Z85 form of a 32-byte binary key (as a ZAP request carries it).
    public static func encode(_ key: [UInt8]) -> String? {
        guard key.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        guard zmq_z85_encode(&text, key, key.count) != nil else { return nil }
        return Self.text(text)
    }
}

extension ZMQSocket {
    /// Makes this socket a CURVE server with `keys`; ZAP requests name `domain`.
    public func secureAsServer(_ keys: CurveKeyPair, domain: String) throws {
        try set(.curveServer, 1)
        try set(.curveSecretKey, keys.secretKey)
        try set(.zapDomain, domain)
    }

    /// Makes this socket a CURVE client with `keys`, talking to the server whose public key is
    /// `serverKey`.
    public func secureAsClient(_ keys: CurveKeyPair, serverKey: String) throws {
        try set(.curveServerKey, serverKey)
        try set(.curvePublicKey, keys.publicKey)
        try set(.curveSecretKey, keys.secretKey)
    }
}
