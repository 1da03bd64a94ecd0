import LifelineProtocol

extension LifelineActorSystem {
    /// Where a distributed actor of a ``LifelineActorSystem`` is reached: the name of the service that
    /// hosts it, and for an actor by key its key (`cart/ana`). Any process that resolves this ID gets a
    /// reference whose calls the broker routes to that service (to the instance the key is placed
    /// on), as `lifeline call` would.
    ///
    /// ```swift
    /// let gateway = try $SignInGateway.resolve(id: "gateway", using: actors)
    /// let cart = try $CartAPI.resolve(id: .init(service: "cart", key: user), using: actors)
    /// ```
    public struct ActorID: Hashable, Sendable, Codable, CustomStringConvertible,
        ExpressibleByStringInterpolation
    {
        /// The registered name of the hosting service.
        public let service: String
        /// The key of an actor the service hosts by key (``Service/actors(idleAfter:deactivate:_:)``);
        /// nil for the one actor a service hosts (``Service/actor(_:)``).
        public let key: String?

        /// The actor hosted under the service name `service`, or its actor of `key`.
        public init(service: String, key: String? = nil) {
            self.service = service
            self.key = key
        }

        /// The actor at `address`: a service name (`"gateway"`), or a service and a key (`"cart/ana"`,
        /// `"cart/\(user)"`).
        public init(stringLiteral address: String) { self.init(address: address) }

        /// The actor at `address`: a service name, or `service/key`.
        init(address: String) {
            let (service, key) = ActorKey.split(address)
            self.init(service: service, key: key)
        }

        /// Reads the ID as its address (a JSON string: `gateway`, `cart/ana`).
        /// - Throws: `DecodingError` when the value is not a string.
        public init(from decoder: any Decoder) throws {
            self.init(address: try decoder.singleValueContainer().decode(String.self))
        }

        /// Writes the ID as its address.
        /// - Throws: what the encoder throws.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(description)
        }

        /// The address: `service`, or `service/key`.
        public var description: String { key.map { "\(service)/\($0)" } ?? service }
    }
}
