"""N GETs of URL over HTTP/2 with 32 in flight, after a warm-up of 64, for strace/callgrind.

Usage: h2_batch_probe.py URL N MODE [CA|-]
MODE: batch (Client.get_many), threads (32 threads sharing a Client), seq (one by one),
async (32 asyncio tasks sharing an AsyncClient). Per request = (run with N - run with 0) / N.
Prints req/s, CPU us/req (getrusage) and context switches when N > 0.
"""

import asyncio
import resource
import sys
import threading
import time

import nodelay

IN_FLIGHT = 32

url, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ca = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else True
http2 = True if url.startswith("https") else "prior_knowledge"
client = nodelay.Client(http2=http2, verify=ca, timeout=30)


def run_threads(k: int) -> None:
    left = [k]
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            client.get(url).content

    threads = [threading.Thread(target=work) for _ in range(IN_FLIGHT)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


loop = asyncio.new_event_loop()


async def make_async() -> nodelay.AsyncClient:
    return nodelay.AsyncClient(http2=http2, verify=ca, timeout=30)


async def run_tasks(aclient: nodelay.AsyncClient, k: int) -> None:
    left = [k]

    async def work() -> None:
        while left[0] > 0:
            left[0] -= 1
            (await aclient.get(url)).content

    await asyncio.gather(*(work() for _ in range(IN_FLIGHT)))


aclient = loop.run_until_complete(make_async()) if mode == "async" else None


def run(k: int) -> None:
    if mode == "batch":
        assert all(r.status_code == 200 for r in client.get_many([url] * k, concurrency=IN_FLIGHT))
    elif mode == "seq":
        for _ in range(k):
            client.get(url).content
    elif mode == "threads":
        run_threads(k)
    else:
        assert aclient is not None
        loop.run_until_complete(run_tasks(aclient, k))


run(64)
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
if n:
    run(n)
t, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
if n:
    print(
        f"{mode} n={n} {n / t:,.0f} req/s, CPU {cpu / n * 1e6:.1f} us/req, "
        f"ctx switches {r1.ru_nvcsw - r0.ru_nvcsw} voluntary {r1.ru_nivcsw - r0.ru_nivcsw} involuntary"
    )
