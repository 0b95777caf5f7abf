"""Sequential GETs of /bytes/202 for callgrind: N requests after a warm-up of 50.
Usage: cg_drive.py URL N MODE (MODE: h1 | h2c)"""
import sys
import nodelay

url, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = nodelay.Client(http2="prior_knowledge" if mode == "h2c" else False)
for _ in range(50):
    client.get(url)
for _ in range(n):
    r = client.get(url)
    assert r.status_code == 200 and len(r.content) == 202
client.close()
