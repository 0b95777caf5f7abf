"""A TCP relay that delays every byte by DELAY_MS in each direction (a userspace stand-in
for `tc qdisc netem delay`, which this kernel lacks): bandwidth is what the relay can copy,
the round trip gains 2 x DELAY_MS. Usage: h2_delay_relay.py LISTEN_PORT TARGET_PORT DELAY_MS"""
import collections, socket, sys, threading, time

listen_port, target_port, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000

def pump(src, dst):
    q = collections.deque(); cv = threading.Condition()
    def writer():
        while True:
            with cv:
                while not q:
                    cv.wait()
                due, data = q.popleft()
            left = due - time.monotonic()
            if left > 0:
                time.sleep(left)
            if not data:
                try: dst.shutdown(socket.SHUT_WR)
                except OSError: pass
                return
            try: dst.sendall(data)
            except OSError: return
    threading.Thread(target=writer, daemon=True).start()
    while True:
        try: data = src.recv(262144)
        except OSError: data = b""
        with cv:
            q.append((time.monotonic() + delay, data)); cv.notify()
        if not data:
            return

srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", listen_port)); srv.listen(64)
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", target_port))
    for s in (c, u):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
