import Foundation
import Glibc
import LifelineSupport
import Testing

@Suite("Mailbox: a socket thread's command pipe", .timeLimit(.minutes(1)))
struct MailboxTests {
    /// Whether the mailbox's descriptor is readable now.
    private static func isReadable(_ mailbox: Mailbox<Int>) -> Bool {
        var descriptor = pollfd(fd: mailbox.fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1
    }

    @Test("a wake-up's byte is read by the next drain: the descriptor is quiet again")
    func drainEmptiesThePipe() {
        let mailbox = Mailbox<Int>()
        #expect(!Self.isReadable(mailbox))
        for value in 0..<5 { mailbox.post(value) }
        mailbox.wake()
        mailbox.wake()
        #expect(Self.isReadable(mailbox))
        #expect(mailbox.drain() == [0, 1, 2, 3, 4])
        #expect(!Self.isReadable(mailbox))
        mailbox.postFromOwner(9)
        #expect(!Self.isReadable(mailbox), "the owner's own post wakes nobody")
        #expect(mailbox.drain() == [9])
    }

    @Test("a drain that falls between a wake-up's count and its write leaves nothing behind the next drain")
    func drainBetweenCountAndWrite() {
        let mailbox = Mailbox<Int>()
        mailbox.post(1)
        mailbox.countWakeUp()
        #expect(mailbox.drain() == [1])
        mailbox.writeWakeUp()
        #expect(Self.isReadable(mailbox), "the byte came after the drain")
        #expect(mailbox.drain().isEmpty)
        #expect(!Self.isReadable(mailbox), "the next drain read it: the owner's poll is quiet again")
    }

    @Test(
        "an owner polling while another thread posts: every message arrives in order, and each empty wake-up is paid for by a wake"
    )
    func ownerNeverSpins() {
        let mailbox = Mailbox<Int>()
        let count = 20_000
        let wakes = 2_000
        let finished = DispatchSemaphore(value: 0)
        let poster = Thread {
            for value in 0..<count {
                mailbox.post(value)
                if value % (count / wakes) == 0 { mailbox.wake() }
            }
            finished.signal()
        }
        poster.start()
        var received: [Int] = []
        var emptyWakeUps = 0
        while received.count < count {
            var descriptor = pollfd(fd: mailbox.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 5_000)
            if ready < 0 && errno == EINTR { continue }
            guard ready == 1 else { break }
            let messages = mailbox.drain()
            if messages.isEmpty { emptyWakeUps += 1 }
            received += messages
        }
        #expect(received == Array(0..<count))
        // A post wakes the owner only when the queue was empty: at most one byte per post and per
        // wake; a byte left in the pipe after a drain would make every later poll return at once.
        #expect(emptyWakeUps <= count + wakes)
        // The poster's last wake-up may still be on its way: the pipe is judged once it is done.
        finished.wait()
        #expect(mailbox.drain().isEmpty)
        #expect(!Self.isReadable(mailbox))
    }
}
