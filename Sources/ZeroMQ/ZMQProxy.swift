import CZeroMQ

/// libzmq's built-in relay, `zmq_proxy`: forwards messages between `frontend` and `backend` on the
/// calling thread until the context is terminated. Used as the benchmark's baseline broker.
public enum ZMQProxy {
    /// Runs `zmq_proxy(frontend, backend, NULL)`; returns only when it fails (e.g. `ETERM`).
    public static func run(frontend: ZMQSocket, backend: ZMQSocket) -> ZeroMQError {
        zmq_proxy(frontend.rawHandle, backend.rawHandle, nil)
        return ZeroMQError.last("zmq_proxy")
    }
}
