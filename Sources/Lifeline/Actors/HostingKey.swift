/// Where a service's hosted actors are kept: by connection and service name, since copies of one
/// ``Service`` value may run more than once in a process (tests, `--name`), each with actors of
/// its own.
struct HostingKey: Hashable {
    let connection: ObjectIdentifier
    let service: String

    init(_ context: ServiceContext, _ service: String) {
        connection = ObjectIdentifier(context.client)
        self.service = service
    }
}
