import CZeroMQ

/// The ZeroMQ socket types the runtime uses.
public enum SocketType: Int32, Sendable, CustomStringConvertible {
    case pair = 0
    case pub = 1
    case sub = 2
    case req = 3
    case rep = 4
    case dealer = 5
    case router = 6
    case pull = 7
    case push = 8
    case xpub = 9
    case xsub = 10
    case stream = 11

    public var description: String {
        switch self {
        case .pair: "PAIR"
        case .pub: "PUB"
        case .sub: "SUB"
        case .req: "REQ"
        case .rep: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .pull: "PULL"
        case .push: "PUSH"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        case .stream: "STREAM"
        }
    }
}
