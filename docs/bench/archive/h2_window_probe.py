"""MB/s of 10 MiB GETs over HTTP/1.1 and h2c, direct and through h2_delay_relay.py.
Usage: window_probe.py DIRECT_PORT PROXIED_PORT [N]"""
import sys, time, resource
import nodelay

direct, proxied = int(sys.argv[1]), int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
size = 10 * 1024 * 1024
for label, port in (("loopback", direct), ("relay +10 ms each way", proxied)):
    for mode in (False, "prior_knowledge"):
        with nodelay.Client(http2=mode, timeout=60) as c:
            r = c.get(f"http://127.0.0.1:{port}/bytes/{size}")
            assert len(r.content) == size
            version = r.http_version
            rates = []
            for _ in range(3):
                t = time.perf_counter()
                for _ in range(n):
                    assert len(c.get(f"http://127.0.0.1:{port}/bytes/{size}").content) == size
                rates.append(n * size / (time.perf_counter() - t) / 1e6)
        print(f"{label:24} {version:9} MB/s median {sorted(rates)[1]:7.0f}  (runs {', '.join(f'{x:.0f}' for x in rates)})", flush=True)
