import LifelineProtocol
import LifelineSupport
import ZeroMQ

extension LifelineClient {
    /// What a client needs to talk to a broker that runs with CURVE: its own key pair and the broker's
    /// public key. Both sockets (control and bus) then encrypt, and the broker's ZAP handler checks the
    /// client's key against its allow-list.
    public struct Credentials: Sendable, Equatable {
        package let keys: CurveKeyPair
        /// The broker's public key (Z85).
        public let brokerKey: String

        package init(keys: CurveKeyPair, brokerKey: String) {
            self.keys = keys
            self.brokerKey = brokerKey
        }

        /// Reads the key pair file at `keyFile` (refused when others may read it) and the broker's
        /// public key: a `.pub` file, or the 40 Z85 characters themselves.
        /// - Throws: ``LifelineError`` (`.invalid`) naming the file and what is wrong with it.
        public init(keyFile: String, brokerKey: String) throws(LifelineError) {
            do {
                let pair = try KeyFile.readPair(keyFile)
                let keys: CurveKeyPair
                do {
                    keys = try CurveKeyPair(secretKey: pair.secretKey)
                } catch {
                    throw KeyFile.Problem("\(keyFile): the secret key is not 40 Z85 characters")
                }
                if let stated = pair.publicKey, stated != keys.publicKey {
                    throw KeyFile.Problem("\(keyFile): its public key does not belong to its secret key")
                }
                let server = try KeyFile.publicKey(brokerKey)
                guard CurveKeyPair.isKey(server) else {
                    throw KeyFile.Problem("the broker key \(brokerKey) is not 40 Z85 characters")
                }
                self.init(keys: keys, brokerKey: server)
            } catch {
                throw LifelineError(.badRequest, "\(error)")
            }
        }

        /// From `LIFELINE_KEY` (a key pair file) and `LIFELINE_BROKER_KEY` (the broker's public key or
        /// its `.pub` file); nil when neither is set.
        /// - Throws: ``LifelineError`` (`.invalid`) when one of the two variables is set without the other, or names a bad file.
        public static func fromEnvironment() throws(LifelineError) -> LifelineClient.Credentials? {
            let key = Environment.variable("LIFELINE_KEY").flatMap { $0.isEmpty ? nil : $0 }
            let broker = Environment.variable("LIFELINE_BROKER_KEY").flatMap { $0.isEmpty ? nil : $0 }
            switch (key, broker) {
            case (nil, nil): return nil
            case (let key?, let broker?):
                return try LifelineClient.Credentials(keyFile: key, brokerKey: broker)
            case (nil, _):
                throw LifelineError(.badRequest, "LIFELINE_BROKER_KEY is set but LIFELINE_KEY is not")
            case (_, nil):
                throw LifelineError(.badRequest, "LIFELINE_KEY is set but LIFELINE_BROKER_KEY is not")
            }
        }

        /// `--key FILE`: a client's key pair.
        package static let keyOption = CommandLineOption.value(
            "--key", "FILE", help: "your CURVE key pair, for a broker with CURVE (default: $LIFELINE_KEY)")

        /// `--broker-key KEY|FILE`: the broker's public key.
        package static let brokerKeyOption = CommandLineOption.value(
            "--broker-key", "K", help: "the broker's public key or .pub file (default: $LIFELINE_BROKER_KEY)")

        /// Reads `--key FILE` and `--broker-key KEY|FILE` out of `arguments` (each defaulting to its
        /// environment variable): nil when neither is given; one without the other, or a bad file, is a
        /// usage error.
        package static func parse(_ arguments: inout CommandLineArguments) throws(UsageError)
            -> LifelineClient.Credentials?
        {
            let keyFile = try arguments.option(keyOption) ?? Environment.variable("LIFELINE_KEY")
            let brokerKey =
                try arguments.option(brokerKeyOption) ?? Environment.variable("LIFELINE_BROKER_KEY")
            switch (keyFile.flatMap { $0.isEmpty ? nil : $0 }, brokerKey.flatMap { $0.isEmpty ? nil : $0 }) {
            case (nil, nil): return nil
            case (let keyFile?, let brokerKey?):
                do {
                    return try LifelineClient.Credentials(keyFile: keyFile, brokerKey: brokerKey)
                } catch {
                    throw UsageError(error.message)
                }
            case (nil, _): throw UsageError("--broker-key needs --key (a key pair of your own)")
            case (_, nil): throw UsageError("--key needs --broker-key (the broker's public key)")
            }
        }

        /// The credentials the environment gives, or nil (an invalid setting is reported on stderr
        /// once, and the client connects without: the broker then refuses it).
        public static let environment: LifelineClient.Credentials? = {
            do {
                return try fromEnvironment()
            } catch let error as LifelineError {
                Console.log("lifeline", "ignoring the environment's keys: \(error.message)")
                return nil
            } catch {
                return nil
            }
        }()

        /// Sets up `socket` as a CURVE client with these credentials.
        package func secure(_ socket: ZMQSocket) throws {
            try socket.secureAsClient(keys, serverKey: brokerKey)
        }
    }
}
