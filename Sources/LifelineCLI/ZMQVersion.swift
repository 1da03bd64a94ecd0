import ZeroMQ

enum ZMQVersion {
    static var library: String { ZMQContext.libraryVersion }
}
