/// The host each of the last 1024 callbacks went to, by callback id.
struct CallbackHosts {
    static let capacity = 1024
    private var hosts: [String: String] = [:]
    private var order: [String] = []

    /// Remembers where `callback` went (a callback without an id is not remembered).
    mutating func note(_ callback: AppCallback) {
        guard let id = callback.id, hosts.updateValue(callback.host, forKey: id) == nil else { return }
        order.append(id)
        if order.count > Self.capacity { hosts[order.removeFirst()] = nil }
    }

    /// The host the callback `id` went to, if it is remembered.
    func host(of id: String) -> String? { hosts[id] }
}
