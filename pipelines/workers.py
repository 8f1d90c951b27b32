"""``swemine run --workers N`` on one machine: N in-process Beam pipelines in N OS processes, one merge.

Why not Beam's own local parallelism: the FnApiRunner's ``multi_processing`` mode starts SDK worker
subprocesses (~2.5 s) and moves every element through the runner process over gRPC, which made runs on two
cores slower than one. Here every worker is the *same* pipeline graph on the in-process FnApiRunner, forked
from the launching process (so nothing is imported twice), working on its own part of the data:

- sources take :func:`share` of their list (units, task files, repo specs), balanced by size, or walk the
  whole list and :func:`claim` each item just before its work (FIM's files: balanced as the workers go);
- where the graph needs records of one key together (a join, a group, a dedup bucket) it calls
  :func:`exchange` (records move to the worker owning the key's hash) or :func:`broadcast` (every worker
  sees every record: small tables such as run labels, tasks or per-key counts). Both are the identity in a
  one-worker run, so that graph, and the one Dataflow runs, is unchanged. A worker writes what it sends to
  pickle files, marks itself done, and the reading stage waits (a side input orders the stages) until all
  workers are done. The FnApiRunner may order independent stages differently in two workers, so the waits
  are chained in build order (each exchange's reading stage also waits for the previous one's): no two workers
  can wait for each other at two different exchanges;
- per-file work that needs a whole repository (the FIM graph) runs on every worker from broadcast
  structures, each keeping the files it claimed; records for such a file are sent to its :func:`claimant`.

Each worker (and a one-worker local run) writes its records straight to per-bucket Arrow files with the run's
global bucket count (no shard shuffle: :class:`WriteParts`); the merge concatenates bucket ``b`` of every worker,
sorts it as the shuffling writer does (record id, provenance) and writes the same bytes; counters are summed (the
``info.fanout`` flag: max). A worker that fails aborts the others.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import itertools
import logging
import multiprocessing
import os
import pickle
import re
import signal
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from swemine.corpora.records import conform
from swemine.manifests.shards import ROW_GROUP_ROWS, TMP_DIR, bucket_of, bucket_url, row_order, write_tables_atomic
from swemine.pipelines.failures import RunFailed, dead_worker, environment_failure
from swemine.pipelines.scratch import memory_folder, new_scratch, remove_scratch
from swemine.runtime import die_with_parent, paused_gc

log = logging.getLogger("swemine")

ABORT = "ABORT"
CLAIMS = "claims"                   # the folder of :func:`claim`'s files under a run's scratch root
POLL_S = 0.005
LOCAL_RUNNERS = ("FnApiRunner", "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner")


@dataclass(frozen=True)
class Partition:
    """This process's place in a ``--workers`` run: worker ``index`` of ``count``, exchanging under ``root``."""
    index: int
    count: int
    root: str


_current: Partition | None = None
_writing_parts = False              # set for a local run: WriteShards writes Arrow parts, merge_buckets merges
_exchanges = itertools.count()      # numbers the exchanges in build order: the same in every worker
_last_done = None                   # the previous exchange's "done" output: each exchange waits after it


def current() -> Partition | None:
    """The partition of the running worker, ``None`` in a one-worker run (and on Dataflow)."""
    return _current


@contextlib.contextmanager
def writing_parts():
    """While the block lasts, pipelines built here write their shards as :class:`WriteParts` (a local run, one
    worker or many, whose buckets :func:`merge_buckets` writes); elsewhere (Dataflow) ``WriteShards`` shuffles."""
    global _writing_parts
    before, _writing_parts = _writing_parts, True
    try:
        yield
    finally:
        _writing_parts = before


def writes_parts() -> bool:
    """True inside :func:`writing_parts`."""
    return _writing_parts


def slot(key: Any, count: int) -> int:
    """The worker owning ``key`` (stable across processes and runs: a hash of its ``repr``)."""
    digest = hashlib.blake2b(repr(key).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def owns(key: Any) -> bool:
    """True when this worker owns ``key`` (always in a one-worker run)."""
    part = _current
    return part is None or slot(key, part.count) == part.index


def claim(name: str, key: str) -> bool:
    """True for exactly one worker of the run: the first to ask for ``key`` under ``name`` (always in a one-worker
    run). Workers that walk the same list and claim each item just before its work get dynamic balance: a worker
    slowed by a large file or a busy core takes fewer of the rest. The claim is an exclusive, atomic create of a
    symbolic link named by a digest of ``name`` and ``key``, pointing at the winner's index (for
    :func:`claimant`), in the run's claims folder (in memory where the machine allows:
    :func:`~swemine.pipelines.scratch.memory_folder`)."""
    part = _current
    if part is None:
        return True
    try:
        os.symlink(str(part.index), _claim_path(part.root, name, key))
    except FileExistsError:
        return False
    return True


def claimant(name: str, key: str) -> int | None:
    """The index of the worker that won ``key`` under ``name`` (``None``: nobody claimed it). Call it only after
    an exchange that follows the claims."""
    try:
        return int(os.readlink(_claim_path(_current.root, name, key)))
    except (OSError, ValueError):
        return None


def _claim_path(root: str, name: str, key: str) -> str:
    digest = hashlib.blake2b(f"{name}\0{key}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return os.path.join(root, CLAIMS, digest)


def share(items: Iterable, weight: Callable[[Any], float] | None = None) -> list:
    """This worker's part of a source list: items dealt largest first to the least-loaded worker (ties: lowest
    index), so the parts are balanced by ``weight`` and the same in every worker. All items in a one-worker run."""
    items = list(items)
    part = _current
    if part is None:
        return items
    weigh = weight or (lambda _: 1)
    loads = [0.0] * part.count
    mine = []
    for i in sorted(range(len(items)), key=lambda i: (-weigh(items[i]), i)):
        w = min(range(part.count), key=lambda k: (loads[k], k))
        loads[w] += weigh(items[i])
        if w == part.index:
            mine.append(items[i])
    return mine


def file_weight(uri: str) -> int:
    """Bytes under a local file or directory (1 when it cannot be stat-ed): the weight :func:`share` balances."""
    if os.path.isdir(uri):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(uri) for f in fs) or 1
    try:
        return os.path.getsize(uri) or 1
    except OSError:
        return 1


class _Spill(beam.DoFn):
    """Pickle each record into the file of the worker that should receive it (``all`` for a broadcast)."""

    def __init__(self, part: Partition, folder: str, to: Callable[[Any], int] | None):
        self.part, self.folder, self.to = part, folder, to

    def start_bundle(self):
        self._files: dict[str, Any] = {}
        self._tag = uuid.uuid4().hex[:12]

    def process(self, element):
        dest = "all" if self.to is None else str(self.to(element))
        fh = self._files.get(dest)
        if fh is None:
            fh = self._files[dest] = open(os.path.join(self.folder, f"to-{dest}.from-{self.part.index}.{self._tag}.tmp"),
                                          "wb")
        pickle.dump(element, fh, protocol=pickle.HIGHEST_PROTOCOL)

    def finish_bundle(self):
        for fh in self._files.values():
            fh.close()
            os.replace(fh.name, fh.name[:-len(".tmp")] + ".pkl")


def wait_for(paths: list[str], root: str, what: str) -> None:
    """Block until every path exists; raise when a worker aborted the run (its ``ABORT`` file appears)."""
    while not all(os.path.exists(p) for p in paths):
        if os.path.exists(os.path.join(root, ABORT)):
            raise RuntimeError(f"another worker failed while this one waited for {what}")
        time.sleep(POLL_S)


class _Collect(beam.DoFn):
    """Runs once this worker's spill stage is complete (its output is the side input): marks this worker done,
    waits for the others, then streams the records addressed to this worker (and to all), or with ``grouped``
    (records are ``(key, value)`` pairs) yields ``(key, values)`` groups."""

    def __init__(self, part: Partition, folder: str, grouped: bool = False):
        self.part, self.folder, self.grouped = part, folder, grouped

    def process(self, _, spilled, previous=()):
        open(os.path.join(self.folder, f"done-{self.part.index}"), "w").close()
        wait_for([os.path.join(self.folder, f"done-{k}") for k in range(self.part.count)], self.part.root,
                 os.path.basename(self.folder))
        if not self.grouped:
            yield from self._records()
        else:
            groups: dict[Any, list] = {}
            for key, value in self._records():
                groups.setdefault(key, []).append(value)
            yield from groups.items()
        yield beam.pvalue.TaggedOutput("done", self.part.index)

    def _records(self):
        for dest in (str(self.part.index), "all"):
            for path in sorted(glob.glob(os.path.join(self.folder, f"to-{dest}.from-*.pkl"))):
                yield from _load_all(path)


def _load_all(path: str, batch: int = 1000) -> Iterator[Any]:
    """The records pickled one after another into ``path``, loaded ``batch`` at a time with the cyclic collector
    paused (records such as a repository's FIM structures are many small objects: loading them with it running
    takes 4x as long)."""
    with open(path, "rb") as fh:
        done = False
        while not done:
            records = []
            with paused_gc():
                try:
                    while len(records) < batch:
                        records.append(pickle.load(fh))
                except EOFError:
                    done = True
            yield from records


class _Exchange(beam.PTransform):
    def __init__(self, part: Partition, name: str, to: Callable[[Any], int] | None, grouped: bool = False):
        super().__init__()
        self.part, self.to, self.grouped = part, to, grouped
        safe = "".join(c if c.isalnum() else "_" for c in name)
        self.folder = os.path.join(part.root, "x", f"{next(_exchanges):03d}-{safe}")

    def expand(self, pcoll):
        """Spill, then collect once this worker's spill is complete *and* the previous exchange collected: the
        FnApiRunner may order independent stages differently in two workers, and two exchanges waited for in
        opposite orders would deadlock; chained, every worker waits for them in build order."""
        global _last_done
        os.makedirs(self.folder, exist_ok=True)
        part, folder = self.part, self.folder
        spilled = pcoll | "Spill" >> beam.ParDo(_Spill(part, folder, self.to))      # outputs nothing
        after = {"previous": beam.pvalue.AsList(_last_done)} if _last_done is not None else {}
        out = (pcoll.pipeline | "Start" >> beam.Impulse()
               | "Collect" >> beam.ParDo(_Collect(part, folder, self.grouped), beam.pvalue.AsList(spilled), **after
                                         ).with_outputs("done", main="records"))
        _last_done = out.done
        return out.records


def exchange(pcoll, name: str, key: Callable[[Any], Any] | None = None, to: Callable[[Any], int] | None = None):
    """``pcoll`` with each record moved to the worker owning ``key(record)`` (or to worker ``to(record)``); the
    identity in a one-worker run. ``name`` labels the transform (unique in the pipeline)."""
    if _current is None:
        return pcoll
    count = _current.count
    return pcoll | name >> _Exchange(_current, name, to or (lambda record: slot(key(record), count)))


def broadcast(pcoll, name: str):
    """``pcoll`` with every worker's records on every worker; the identity in a one-worker run."""
    return pcoll if _current is None else pcoll | name >> _Exchange(_current, name, None)


def gather(pcoll, name: str, key: Callable[[Any], Any]):
    """``(key, packed records)`` groups of ``pcoll`` (``Map`` + ``GroupByKey``, labelled ``name``); with
    ``--workers`` every worker gets every group. A group's records stay pickled until :func:`unpack_group`:
    Beam estimates the size of a sample of elements by encoding them, and one group element is a whole
    repository's records."""
    keyed = pcoll | f"{name}Key" >> beam.Map(lambda r: (key(r), pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)))
    if _current is None:
        return keyed | name >> beam.GroupByKey()
    return keyed | name >> _Exchange(_current, name, None, grouped=True)


def unpack_group(blobs: Iterable[bytes]) -> list:
    """The records of one :func:`gather` group, loaded with the cyclic collector paused (see :func:`_load_all`)."""
    with paused_gc():
        return [pickle.loads(b) for b in blobs]  # noqa: S301 - records this pipeline pickled itself


def is_local(beam_args: list[str]) -> bool:
    """True when the Beam arguments name no runner or a local one and the OS can fork (``--workers`` applies
    only there; elsewhere the run has one worker)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    for i, a in enumerate(beam_args):
        if a.startswith("--runner"):
            name = a.split("=", 1)[1] if "=" in a else (beam_args[i + 1] if i + 1 < len(beam_args) else "")
            return name in LOCAL_RUNNERS
    return True


def _worker(run_one: Callable, part: Partition, results, parent: int) -> None:
    """Body of one forked worker: run the pipeline as partition ``part``; report counters or the error. The
    launcher alone answers Ctrl-C and SIGTERM (it stops the workers); a worker dies with its launcher (pid
    ``parent``) even when that one is killed outright."""
    global _current, _exchanges, _last_done
    _current, _exchanges, _last_done = part, itertools.count(), None
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent()
    if os.getppid() != parent:          # the launcher died before the line above
        os._exit(1)
    tempfile.tempdir = os.path.join(part.root, f"tmp-{part.index}")    # Beam's and git's temporary files too:
    os.makedirs(tempfile.tempdir)                                      # removed with the root, even when stopped
    try:
        results.put((part.index, run_one(os.path.join(part.root, f"out-{part.index}")), None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which aborts the run
        open(os.path.join(part.root, ABORT), "w").close()
        found = environment_failure(exc, os.path.dirname(part.root))
        results.put((part.index, None, RunFailed(found) if found else RuntimeError(
            f"a --workers process failed:\n{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}")))


def run_partitioned(run_one: Callable[[str], Any], n: int) -> tuple[str, list]:
    """Run ``run_one(worker_output)`` in ``n`` forked processes as partitions 0..n-1 (``n`` = 1: in this process,
    as an unpartitioned run); return the scratch root (holding ``out-<k>/``) and what each worker's ``run_one``
    returned, by worker index (e.g. counters to :func:`merge_counters`). The caller removes the root after
    :func:`merge_buckets` (:func:`remove_scratch`)."""
    root = new_scratch()
    if n == 1:
        try:
            return root, [run_one(os.path.join(root, "out-0"))]
        except BaseException:
            remove_scratch(root)
            raise
    memory_folder(root, CLAIMS)
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(run_one, Partition(k, n, root), results, os.getpid()), daemon=True)
             for k in range(n)]
    got_by_index: dict[int, Any] = {}
    try:
        for proc in procs:
            proc.start()
        for _ in procs:
            index, got, err = _get(results, procs)
            if err:
                raise err
            got_by_index[index] = got
    except BaseException:               # a worker failed, or this process was interrupted: stop them all
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            if proc.pid is not None:
                proc.join()
        remove_scratch(root)
        raise
    for proc in procs:
        proc.join()
    return root, [got_by_index[k] for k in range(n)]


def _get(results, procs):
    """Next worker report ``(index, result, error)``; the error of a worker that died without one (killed, out
    of memory) otherwise."""
    while True:
        try:
            return results.get(timeout=1.0)
        except Exception:  # noqa: BLE001 - queue.Empty: check that the workers are still alive
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                return None, None, RunFailed(dead_worker(dead[0].pid, dead[0].exitcode))


def merge_counters(per_worker: list[list[tuple[str, int]]]) -> list[tuple[str, int]]:
    """Sum the workers' counters by name; ``<stage>.info.fanout`` is a flag, so it takes the max."""
    total: dict[str, int] = {}
    for counters in per_worker:
        for name, value in counters:
            if name.endswith(".info.fanout"):
                total[name] = max(total.get(name, 0), value)
            else:
                total[name] = total.get(name, 0) + value
    return sorted(total.items())


class WriteParts(beam.DoFn):
    """``WriteShards`` on a local runner (one worker or many), without its shuffle: each bundle's records go into
    uncompressed Arrow IPC files, one per bucket (``<prefix>.bucket-NNNNN.<tag>.arrow`` under ``<output>/_tmp``);
    :func:`merge_buckets` sorts every bucket and writes its Parquet shard once. ``prepare`` makes an incoming
    record the stored one (the config hash stamp). At most :data:`ROW_GROUP_ROWS` records are held at a time."""

    def __init__(self, output: str, prefix: str, schema: pa.Schema, num_buckets: int,
                 prepare: Callable[[Mapping], Mapping]):
        self.output, self.prefix, self.schema, self.num_buckets, self.prepare = output, prefix, schema, num_buckets, prepare

    def start_bundle(self):
        self._rows: dict[int, list[dict]] = {}
        self._held = 0
        self._files: dict[int, tuple[str, Any, Any]] = {}
        self._tag = uuid.uuid4().hex[:12]

    def process(self, record):
        self._rows.setdefault(bucket_of(record["record_id"], self.num_buckets), []).append(
            conform(self.schema, self.prepare(record)))
        self._held += 1
        if self._held >= ROW_GROUP_ROWS:
            self._flush()

    def finish_bundle(self):
        self._flush()
        for path, sink, writer in self._files.values():
            writer.close()
            sink.close()
            os.replace(path, path[:-len(".tmp")])

    def _flush(self):
        for bucket, rows in sorted(self._rows.items()):
            if bucket not in self._files:
                path = bucket_url(self.output, self.prefix, bucket, suffix=f"{self._tag}.arrow.tmp")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                sink = pa.OSFile(path, "wb")
                self._files[bucket] = (path, sink, pa.ipc.new_file(sink, self.schema))
            self._files[bucket][2].write_table(pa.Table.from_pylist(rows, schema=self.schema))
        self._rows, self._held = {}, 0


def merge_buckets(root: str, n: int, output: str, schemas: dict[str, pa.Schema]) -> None:
    """The parts of bucket ``b`` from every worker (:class:`WriteParts`) → one bucket ``b`` under
    ``<output>/_tmp``, rows in the order of :func:`swemine.manifests.shards.write_bucket` (same rows, same order,
    same bytes). Buckets are merged ``n`` at a time (Arrow sorts and Parquet compresses outside the GIL)."""
    by_bucket: dict[str, list[str]] = {}
    for k in range(n):
        for path in glob.glob(os.path.join(root, f"out-{k}", TMP_DIR, "*.bucket-*.arrow")):
            by_bucket.setdefault(_PART_RE.match(os.path.basename(path)).group("bucket"), []).append(path)
    prefixes = {prefix.replace("/", "__"): schema for prefix, schema in schemas.items()}
    largest_first = sorted(by_bucket, key=lambda b: (-sum(os.path.getsize(p) for p in by_bucket[b]), b))
    with ThreadPoolExecutor(max_workers=n) as pool:
        done = [pool.submit(_merge_bucket, sorted(by_bucket[b]), prefixes[b.split(".bucket-")[0]],
                            f"{output.rstrip('/')}/{TMP_DIR}/{b}.parquet") for b in largest_first]
        for future in done:
            future.result()


_PART_RE = re.compile(r"^(?P<bucket>.+\.bucket-\d{5})\.[0-9a-f]+\.arrow$")


def _merge_bucket(paths: list[str], schema: pa.Schema, url: str) -> None:
    """One bucket's parts, sorted, as one Parquet file: row group ``g + 1`` is gathered in a thread while
    the writer compresses row group ``g``."""
    table = pa.concat_tables([pa.ipc.open_file(pa.memory_map(p)).read_all() for p in paths])
    keys = pa.table({f: table.column(f).fill_null("") for f in row_order(schema)})
    order = pc.sort_indices(keys, sort_keys=[(f, "ascending") for f in keys.column_names])
    with ThreadPoolExecutor(max_workers=1) as pool:
        groups = [pool.submit(lambda s: table.take(order[s:s + ROW_GROUP_ROWS]).combine_chunks(), start)
                  for start in range(0, table.num_rows, ROW_GROUP_ROWS)]
        write_tables_atomic(schema, (g.result() for g in groups), url)
