"""Error-miner throughput per core (one process) against a floor measured in the same run, and the LLM cache
hit rate on a re-run.

floor   = reading + normalizing the trajectories (``swemine.corpora.normalize.normalize_paths``), trajectories/s
stage 1 = candidates with evidence + recoveries (``mine.detect_fn``)
stage 3 = verification + record building (rule diagnoser's output; stage 2 timed with it, reported apart)
stage 5 = training views
cache   = the LLM diagnoser against a loopback OpenAI-compatible server, run twice on the same cache directory

    python benchmarks/errors.py [--corpora DIR] [--repeat N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from swemine.clients.llm import LLMClient  # noqa: E402
from swemine.corpora.normalize import normalize_paths  # noqa: E402
from swemine.corpora.records import Filtered, Reject  # noqa: E402
from swemine.miners.errors import diagnosis as dg  # noqa: E402
from swemine.miners.errors.llm_diagnoser import LLMDiagnoser  # noqa: E402
from swemine.miners.errors.mine import detect_fn  # noqa: E402
from swemine.miners.errors.views import build_views  # noqa: E402
from tests.clients.fake_openai import FakeOpenAI  # noqa: E402


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=os.environ.get("SWEMINE_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora"))
    ap.add_argument("--repeat", type=int, default=5, help="passes over the trajectories (more = steadier)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.corpora):
        args.corpora = "/work/shared/corpora"
    inputs = [os.path.join(args.corpora, d) for d in ("swe-agent", "mini-swe-agent", "openhands")]

    t0 = time.perf_counter()
    for _ in range(args.repeat):
        trajs, _ = normalize_paths(inputs)
    floor = _rate(len(trajs) * args.repeat, time.perf_counter() - t0)

    t0 = time.perf_counter()
    for _ in range(args.repeat):
        detected = [x for t in trajs for x in detect_fn({"trajectory": t})]
    s1 = _rate(len(trajs) * args.repeat, time.perf_counter() - t0)
    items = [x for x in detected if not isinstance(x, Filtered)]

    diagnoser = dg.RuleDiagnoser()
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        diagnosed = [(it, diagnoser.diagnose(it)) for it in items]
    s2 = _rate(len(items) * args.repeat, time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        verified = []
        for it, d in diagnosed:
            if not isinstance(d, Reject) and not dg.verify(it, d):
                verified.append({**it, "record": dg.build_record(it, d, diagnoser.name, dg.replay(it, d))})
    s3 = _rate(len(diagnosed) * args.repeat, time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        views = [v for it in verified for v in build_views(it)]
    s5 = _rate(len(verified) * args.repeat, time.perf_counter() - t0)

    answers = {}
    with FakeOpenAI(lambda body: answers.get(body["messages"][1]["content"], "{}")) as srv, \
            tempfile.TemporaryDirectory() as cache:
        from swemine.miners.errors.llm_diagnoser import diagnosis_messages
        for it, d in diagnosed:
            if not isinstance(d, Reject):
                answers[diagnosis_messages(it)[1]["content"]] = json.dumps(
                    {k: v for k, v in d.items() if k != "correction_source"})
        runs = []
        for _ in range(2):
            client = LLMClient(base_url=srv.base_url, model="bench", cache_dir=cache, timeout_s=10)
            llm = LLMDiagnoser(client)
            t0 = time.perf_counter()
            for it in items:
                llm.diagnose(it)
            runs.append((client.stats, time.perf_counter() - t0, len(srv.chat_requests())))
    (cold, cold_s, _), (warm, warm_s, total_requests) = runs

    print(f"trajectories: {len(trajs)} read ({len(items)} with candidates, {len(verified)} verified, "
          f"{len(views)} view rows), {args.repeat} passes, 1 core")
    print(f"floor  read+normalize      {floor:10.1f} traj/s")
    for name, rate in (("stage 1 detect", s1), ("stage 2 rules diagnose", s2), ("stage 3 verify+record", s3),
                       ("stage 5 views", s5)):
        print(f"{name:<26}{rate:10.1f} traj/s   ratio to floor {rate / floor:6.2f}x")
    hit_rate = warm.cache_hits / max(1, len(items))
    print(f"LLM diagnoser: cold run {cold.requests} requests in {cold_s:.2f}s; re-run {warm.requests} requests, "
          f"{warm.cache_hits} cache hits in {warm_s:.2f}s -> cache hit rate {hit_rate:.1%} "
          f"(server saw {total_requests} requests in total)")
    return 0 if hit_rate == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
