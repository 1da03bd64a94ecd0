extension LifelineActorSystem {
    /// Where a distributed actor of a ``LifelineActorSystem`` is reached: the name of the service that
    /// hosts it. Any process that resolves this ID gets a reference whose calls the broker routes to
    /// that service, as `lifeline call` would.
    ///
    /// ```swift
    /// let gateway = try $SignInGateway.resolve(id: "gateway", using: actors)
    /// ```
    public struct ActorID: Hashable, Sendable, Codable, CustomStringConvertible,
        ExpressibleByStringLiteral
    {
        /// The registered name of the hosting service.
        public let service: String

        /// The actor hosted under the service name `service`.
        public init(service: String) { self.service = service }

        /// The actor hosted under the service name `service`: `"gateway"`.
        public init(stringLiteral service: String) { self.init(service: service) }

        /// Reads the ID as its service name (a JSON string).
        /// - Throws: `DecodingError` when the value is not a string.
        public init(from decoder: any Decoder) throws {
            service = try decoder.singleValueContainer().decode(String.self)
        }

        /// Writes the ID as its service name.
        /// - Throws: what the encoder throws.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(service)
        }

        public var description: String { service }
    }
}
