import Testing

@testable import LifelineBroker

@Suite("Messages held for a slow peer", .timeLimit(.minutes(1)))
struct PeerBacklogsTests {
    static func message(_ text: String) -> [[UInt8]] { [Array(text.utf8)] }

    @Test("held in order, sent as the queue takes them, each peer on its own")
    func order() {
        var backlogs = PeerBacklogs(limitPerPeer: 100, limit: 1000)
        #expect(backlogs.hold(Self.message("a1"), for: [1], connection: 1) == .held(first: true))
        #expect(backlogs.hold(Self.message("a2"), for: [1], connection: 1) == .held(first: false))
        #expect(backlogs.hold(Self.message("b1"), for: [2], connection: 2) == .held(first: true))
        #expect(backlogs.holds(1) && backlogs.holds(2) && !backlogs.holds(3))
        #expect(backlogs.bytes == 6)
        var sent: [String] = []
        var room = 2
        let first = backlogs.flush(isOpen: { _ in true }) { _, frames in
            guard room > 0 else { return false }
            room -= 1
            sent.append(String(decoding: frames[0], as: UTF8.self))
            return true
        }
        #expect(sent == ["a1", "a2"], "the queue took two")
        #expect(first == [PeerBacklogs.Flushed(peer: [1], sent: 2, drained: true)])
        #expect(!backlogs.holds(1) && backlogs.holds(2) && backlogs.bytes == 2)
        let second = backlogs.flush(isOpen: { _ in true }) { _, frames in
            sent.append(String(decoding: frames[0], as: UTF8.self))
            return true
        }
        #expect(sent == ["a1", "a2", "b1"] && backlogs.isEmpty && backlogs.bytes == 0)
        #expect(second == [PeerBacklogs.Flushed(peer: [2], sent: 1, drained: true)])
    }

    @Test(
        "bounded per peer and in all: past either, the peer's backlog is forgotten and its connection must go"
    )
    func bounded() {
        var backlogs = PeerBacklogs(limitPerPeer: 10, limit: 15)
        #expect(backlogs.hold(Self.message("12345678"), for: [1], connection: 1) == .held(first: true))
        #expect(backlogs.hold(Self.message("de"), for: [1], connection: 1) == .held(first: false))
        #expect(backlogs.hold(Self.message("f"), for: [1], connection: 1) == .overflow(held: 2))
        #expect(!backlogs.holds(1) && backlogs.bytes == 0, "nothing more for it: no hole in what it gets")
        #expect(backlogs.hold(Self.message("12345678"), for: [2], connection: 2) == .held(first: true))
        #expect(backlogs.hold(Self.message("1234567"), for: [3], connection: 3) == .held(first: true))
        #expect(backlogs.hold(Self.message("1"), for: [3], connection: 3) == .overflow(held: 1), "15 in all")
        let flushed = backlogs.flush(isOpen: { $0 != 2 }) { _, _ in true }
        #expect(flushed.isEmpty, "a connection not open is passed over")
        #expect(backlogs.forget(2)?.count == 1)
        #expect(backlogs.isEmpty && backlogs.bytes == 0)
        #expect(backlogs.forget(2) == nil)
    }

    @Test(
        "the server looks every 5 ms while a peer reads, less often while it reads nothing (160 ms at most)")
    func retry() {
        var backlogs = PeerBacklogs(limitPerPeer: 100, limit: 100)
        #expect(backlogs.hold(Self.message("a1"), for: [1], connection: 1) == .held(first: true))
        #expect(backlogs.hold(Self.message("a2"), for: [1], connection: 1) == .held(first: false))
        var looks: [Int] = []
        for _ in 0..<7 {
            _ = backlogs.flush(isOpen: { _ in true }) { _, _ in false }
            looks.append(backlogs.retryMilliseconds)
        }
        #expect(looks == [10, 20, 40, 80, 160, 160, 160], "a stopped peer")
        var room = 1
        _ = backlogs.flush(isOpen: { _ in true }) { _, _ in
            room -= 1
            return room >= 0
        }
        #expect(backlogs.retryMilliseconds == 5 && backlogs.holds(1), "it read one")
        _ = backlogs.flush(isOpen: { _ in true }) { _, _ in false }
        _ = backlogs.flush(isOpen: { _ in true }) { _, _ in false }
        #expect(backlogs.retryMilliseconds == 20 && backlogs.holds(1))
        #expect(backlogs.hold(Self.message("b1"), for: [2], connection: 2) == .held(first: true))
        #expect(backlogs.retryMilliseconds == 5, "a new backlog starts at 5 ms, beside a stalled one too")
    }
}
