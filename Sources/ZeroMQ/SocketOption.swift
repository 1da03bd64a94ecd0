import CZeroMQ

/// An integer socket option and the C width libzmq expects for it.
public struct IntegerOption: Sendable, Hashable {
    /// The `ZMQ_*` constant.
    public let name: Int32
    /// True for options libzmq reads as `int64_t` rather than `int`.
    public let isWide: Bool

    /// An option libzmq reads as `int` (or `int64_t` when `isWide`).
    public init(_ name: Int32, wide: Bool = false) {
        self.name = name
        self.isWide = wide
    }

    public static let linger = IntegerOption(ZMQ_LINGER)
    /// IPv6 addresses (`tcp://[::1]:…`) as well as IPv4 ones.
    public static let ipv6 = IntegerOption(ZMQ_IPV6)
    public static let sendHighWaterMark = IntegerOption(ZMQ_SNDHWM)
    public static let receiveHighWaterMark = IntegerOption(ZMQ_RCVHWM)
    /// The kernel's receive buffer (`SO_RCVBUF`) of each TCP connection, in bytes.
    public static let receiveBuffer = IntegerOption(ZMQ_RCVBUF)
    public static let sendTimeout = IntegerOption(ZMQ_SNDTIMEO)
    public static let receiveTimeout = IntegerOption(ZMQ_RCVTIMEO)
    public static let immediate = IntegerOption(ZMQ_IMMEDIATE)
    public static let maxMessageSize = IntegerOption(ZMQ_MAXMSGSIZE, wide: true)
    public static let routerMandatory = IntegerOption(ZMQ_ROUTER_MANDATORY)
    public static let routerHandover = IntegerOption(ZMQ_ROUTER_HANDOVER)
    public static let xpubVerbose = IntegerOption(ZMQ_XPUB_VERBOSE)
    public static let xpubVerboser = IntegerOption(ZMQ_XPUB_VERBOSER)
    public static let xpubManual = IntegerOption(ZMQ_XPUB_MANUAL)
    public static let xpubNoDrop = IntegerOption(ZMQ_XPUB_NODROP)
    public static let reconnectInterval = IntegerOption(ZMQ_RECONNECT_IVL)
    public static let reconnectIntervalMax = IntegerOption(ZMQ_RECONNECT_IVL_MAX)
    public static let connectTimeout = IntegerOption(ZMQ_CONNECT_TIMEOUT)
    public static let heartbeatInterval = IntegerOption(ZMQ_HEARTBEAT_IVL)
    public static let heartbeatTimeToLive = IntegerOption(ZMQ_HEARTBEAT_TTL)
    public static let heartbeatTimeout = IntegerOption(ZMQ_HEARTBEAT_TIMEOUT)
    public static let tcpKeepalive = IntegerOption(ZMQ_TCP_KEEPALIVE)
    public static let receiveMore = IntegerOption(ZMQ_RCVMORE)
    public static let events = IntegerOption(ZMQ_EVENTS)
    public static let fileDescriptor = IntegerOption(ZMQ_FD)
    public static let curveServer = IntegerOption(ZMQ_CURVE_SERVER)
    public static let handshakeInterval = IntegerOption(ZMQ_HANDSHAKE_IVL)
}

/// A socket option whose value is a byte string.
public struct BytesOption: Sendable, Hashable {
    /// The `ZMQ_*` constant.
    public let name: Int32

    /// An option libzmq reads as a byte string.
    public init(_ name: Int32) { self.name = name }

    public static let routingID = BytesOption(ZMQ_ROUTING_ID)
    public static let subscribe = BytesOption(ZMQ_SUBSCRIBE)
    public static let unsubscribe = BytesOption(ZMQ_UNSUBSCRIBE)
    public static let xpubWelcomeMessage = BytesOption(ZMQ_XPUB_WELCOME_MSG)
    public static let lastEndpoint = BytesOption(ZMQ_LAST_ENDPOINT)
    /// Z85 keys are set as their 40 characters.
    public static let curvePublicKey = BytesOption(ZMQ_CURVE_PUBLICKEY)
    public static let curveSecretKey = BytesOption(ZMQ_CURVE_SECRETKEY)
    public static let curveServerKey = BytesOption(ZMQ_CURVE_SERVERKEY)
    public static let zapDomain = BytesOption(ZMQ_ZAP_DOMAIN)
}
