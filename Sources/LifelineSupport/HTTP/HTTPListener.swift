import Foundation
import Glibc
import Synchronization

/// A listening TCP socket for one of Lifeline's small HTTP servers. Connections are accepted on a
/// dedicated thread and each is handed to `handler` on a thread of its own, which must close it; at
/// most ``maximumConnections`` at once, and ``maximumPerPeer`` from one address (one more is closed
/// at once, unanswered), so that held connections cannot take the process's descriptors or threads,
/// and one peer cannot take every place.
package final class HTTPListener: Sendable {
    /// How many connections are handled at once, at most.
    package static let maximumConnections = 256
    /// How many connections from one IP address are handled at once, at most.
    package static let maximumPerPeer = 64
    /// The address actually bound, `HOST:PORT` (`[HOST]:PORT` for IPv6).
    package let address: String
    /// The port actually bound.
    package let port: UInt16
    private let descriptor: Int32

    /// Binds `address` (`HOST:PORT`, `[IPv6]:PORT` or `localhost:PORT`; port 0 picks one) and
    /// starts accepting on a thread named `threadName`.
    /// - Throws: ``HTTPError`` (status 0) saying what is wrong with the address or why it cannot be
    ///   bound.
    package init(
        address given: String, threadName: String, handler: @escaping @Sendable (Int32) -> Void
    ) throws(HTTPError) {
        guard let colon = given.lastIndex(of: ":"), let port = UInt16(given[given.index(after: colon)...])
        else {
            throw HTTPError(0, "expected HOST:PORT, e.g. 127.0.0.1:7290, not '\(given)'")
        }
        var host = String(given[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }
        let family = host.contains(":") ? AF_INET6 : AF_INET
        var storage = sockaddr_storage()
        var length: socklen_t
        let parsed = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    $0.pointee.sin6_port = port.bigEndian
                    return inet_pton(AF_INET6, host, &$0.pointee.sin6_addr) == 1
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_family = sa_family_t(AF_INET)
                $0.pointee.sin_port = port.bigEndian
                return inet_pton(AF_INET, host, &$0.pointee.sin_addr) == 1
            }
        }
        guard parsed else { throw HTTPError(0, "'\(host)' is not an IP address (nor localhost)") }
        length = socklen_t(
            family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPError(0, "socket() failed: \(String(cString: strerror(errno)))")
        }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw HTTPError(0, "cannot listen on \(given): \(reason)")
        }
        let boundPort = Self.localPort(of: descriptor) ?? 0
        self.port = boundPort
        self.address = family == AF_INET6 ? "[\(host)]:\(boundPort)" : "\(host):\(boundPort)"
        self.descriptor = descriptor
        let active = Mutex(Admissions())
        let thread = Thread {
            ThreadName.set(threadName)
            while true {
                var peer = sockaddr_storage()
                var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let client = withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        accept(descriptor, $0, &peerLength)
                    }
                }
                if client < 0 {
                    if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                        usleep(10_000)  // out of descriptors: not a busy loop while some are freed
                        continue
                    }
                    if errno == EINTR || errno == ECONNABORTED || errno == EPROTO { continue }
                    return
                }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let address = Self.hostBytes(of: peer)
                guard active.withLock({ $0.admit(address) }) else {
                    close(client)
                    continue
                }
                let connection = Thread {
                    handler(client)
                    active.withLock { $0.release(address) }
                }
                connection.stackSize = 512 * 1024
                connection.start()
            }
        }
        thread.start()
    }

    /// The connections handled now: how many, and from each address.
    private struct Admissions {
        var count = 0
        var perPeer: [[UInt8]: Int] = [:]

        mutating func admit(_ peer: [UInt8]) -> Bool {
            let fromPeer = perPeer[peer, default: 0]
            guard count < HTTPListener.maximumConnections, fromPeer < HTTPListener.maximumPerPeer else {
                return false
            }
            count += 1
            perPeer[peer] = fromPeer + 1
            return true
        }

        mutating func release(_ peer: [UInt8]) {
            count -= 1
            let left = perPeer[peer, default: 1] - 1
            perPeer[peer] = left > 0 ? left : nil
        }
    }

    /// The IP address of `peer`, as its bytes (an IPv4 address mapped into IPv6 as its four).
    private static func hostBytes(of peer: sockaddr_storage) -> [UInt8] {
        var peer = peer
        return withUnsafePointer(to: &peer) { pointer -> [UInt8] in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var address = $0.pointee.sin6_addr
                    let bytes = withUnsafeBytes(of: &address) { Array($0) }
                    let mapped =
                        bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                    return mapped ? Array(bytes[12...]) : bytes
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                var address = $0.pointee.sin_addr
                return withUnsafeBytes(of: &address) { Array($0) }
            }
        }
    }

    /// True when this listener is bound to a loopback address only.
    package var isLoopback: Bool { address.hasPrefix("127.") || address.hasPrefix("[::1]") }

    /// Stops accepting (the accepting thread ends; connections already handed out go on).
    package func stop() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// The local port of a socket: the one a listener bound, or the one a connection reached.
    package static func localPort(of descriptor: Int32) -> UInt16? {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard found else { return nil }
        // The port is at the same place in an IPv4 and an IPv6 address.
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}
