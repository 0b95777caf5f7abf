"""Sequential GETs of /bytes/202: req/s and CPU µs per request for HTTP/1.1, h2c and h2
over TLS (ALPN). Usage: seq_probe.py H2C_URL TLS_URL CA N"""
import resource, sys, time
import nodelay

h2c_url, tls_url, ca, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

for label, url, http2, verify in (("HTTP/1.1", h2c_url, False, True), ("h2c", h2c_url, "prior_knowledge", True), ("h2+TLS", tls_url, True, ca)):
    with nodelay.Client(http2=http2, verify=verify) as c:
        for _ in range(200):
            c.get(url)
        rows = []
        for _ in range(5):
            t, u = time.perf_counter(), cpu()
            for _ in range(n):
                c.get(url)
            rows.append((n / (time.perf_counter() - t), (cpu() - u) / n * 1e6))
        rows.sort()
        rate, us = rows[2]
        print(f"{label:9} {c.get(url).http_version:9} {rate:8.0f} req/s  {us:6.1f} CPU µs/req  (req/s min-max {rows[0][0]:.0f}-{rows[-1][0]:.0f})", flush=True)
