#!/usr/bin/env python3
"""A Lifeline client and service in Python, written from docs/PROTOCOL.md alone.

    pip install pyzmq
    python3 docs/examples/client.py --broker tcp://127.0.0.1:7200

Registers a service 'py-echo' that handles openURL and answers 'echo', publishes an openURL,
receives it on the bus, calls itself through the broker, then unregisters.
"""
import argparse
import json
import os
import socket
import struct
import uuid

import zmq

VERSION = b"LLC01"


def request(dealer, command, rid, header=None, payload=None):
    frames = [VERSION, command, rid, json.dumps(header or {}).encode()]
    if payload is not None:
        frames.append(json.dumps(payload).encode())
    dealer.send_multipart(frames)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", default=os.environ.get("LIFELINE_BROKER", "tcp://127.0.0.1:7200"))
    args = parser.parse_args()

    ctx = zmq.Context.instance()
    dealer = ctx.socket(zmq.DEALER)
    dealer.linger = 200
    dealer.connect(args.broker)
    poller = zmq.Poller()
    poller.register(dealer, zmq.POLLIN)

    def receive(timeout_ms=5000):
        """Next message on the DEALER: answers the broker's CALLs, returns replies."""
        while True:
            if not poller.poll(timeout_ms):
                raise TimeoutError("broker did not answer")
            frames = dealer.recv_multipart()
            assert frames[0] == VERSION, frames
            if frames[1] == b"CALL":  # the broker forwards a call to us
                body = json.loads(frames[4] or b"null")
                dealer.send_multipart([VERSION, b"REPLY", frames[2], b"200", json.dumps({"echo": body}).encode()])
                continue
            if frames[1] == b"HEARTBEAT":
                continue
            return frames

    request(dealer, b"HELLO", b"1")
    hello = receive()
    info = json.loads(hello[4])
    print("HELLO", hello[3].decode(), info["bus"], "epoch", info["epoch"])

    instance = uuid.uuid4().hex
    sub = ctx.socket(zmq.SUB)
    sub.connect(info["bus"])
    sub.setsockopt(zmq.SUBSCRIBE, b"openURL\x00")
    sub.setsockopt(zmq.SUBSCRIBE, b"!" + instance.encode())
    request(dealer, b"REGISTER", b"2", {
        "name": "py-echo", "instance": instance, "pid": os.getpid(), "host": socket.gethostname(),
        "events": ["openURL"], "methods": ["echo"], "heartbeat": {"intervalMs": 1000, "liveness": 3},
        "attach": instance})
    registered = receive()
    print("REGISTER", registered[3].decode(), json.loads(registered[4]))

    request(dealer, b"PUBLISH", b"3", {"event": "openURL"}, {"url": "app://from-python"})
    published = receive()
    print("PUBLISH", published[3].decode(), json.loads(published[4]))
    # A bus message carries one event or more of one name: one 48-byte header each; several payloads
    # come packed in frame 3, each after its 4-byte big-endian length.
    topic, proto, headers, payload = sub.recv_multipart()
    count = len(headers) // 48
    payloads, offset = [payload], 0
    if count > 1:
        payloads = []
        for _ in range(count):
            (length,) = struct.unpack_from(">I", payload, offset)
            payloads.append(payload[offset + 4:offset + 4 + length])
            offset += 4 + length
    for index, body in enumerate(payloads):
        epoch, seq, topic_seq, flags, wall_ns, mono_ns = struct.unpack_from(">6Q", headers, 48 * index)
        print("EVENT", topic[:-1].decode(), proto.decode(), "seq", seq, "topicSeq", topic_seq, json.loads(body))

    # A batch: the header counts the events, frame 4 holds their payloads packed; one reply.
    bodies = [b'{"n":1}', b'{"n":2}']
    packed = b"".join(struct.pack(">I", len(body)) + body for body in bodies)
    dealer.send_multipart([b"LLC01", b"PUBLISH", b"3b", json.dumps({"event": "py.tick", "count": 2}).encode(), packed])
    batch = receive()
    print("PUBLISH batch", batch[3].decode(), json.loads(batch[4]))

    request(dealer, b"CALL", b"4", {"service": "py-echo", "method": "echo", "timeoutMs": 2000}, {"hi": 1})
    called = receive()
    print("CALL", called[3].decode(), json.loads(called[4]))

    request(dealer, b"LOOKUP", b"5", {"name": "nobody"})
    missing = receive()
    print("LOOKUP", missing[3].decode(), json.loads(missing[4]))

    request(dealer, b"UNREGISTER", b"6", {"name": "py-echo", "instance": instance})
    print("UNREGISTER", receive()[3].decode())


if __name__ == "__main__":
    main()
