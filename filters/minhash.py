"""MinHash signatures and LSH bands, deterministic across processes (no Python ``hash``).

Shingles are hashed with xxh64 (lower 32 bits); ``num_perm`` multiply-shift hash functions
``((a*h + b) mod 2^64) >> 32`` (odd ``a``; numpy's uint64 arithmetic wraps) drawn from a seeded numpy generator
give the signature — no modulo, so it costs little more than hashing the shingles. Identical inputs give identical signatures on every
worker, so LSH buckets and clusters do not depend on the runner's parallelism.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import xxhash

MAX_HASH = np.uint64(0xFFFFFFFF)
SHIFT = np.uint64(32)


@lru_cache(maxsize=8)
def _perms(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    a = rng.randint(1, np.iinfo(np.uint64).max, size=num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.randint(0, np.iinfo(np.uint64).max, size=num_perm, dtype=np.uint64)
    return a, b


def hash_shingles(shingles: Iterable[str]) -> np.ndarray:
    """32-bit hashes of the shingles (the floor the signature cost is compared against)."""
    return np.fromiter((xxhash.xxh64_intdigest(s.encode("utf-8")) & 0xFFFFFFFF for s in shingles), dtype=np.uint64)


def signature(shingles: Iterable[str], num_perm: int = 128, seed: int = 42) -> np.ndarray:
    """MinHash signature (``num_perm`` uint32 values) of a set of shingles; all-max for an empty set."""
    return _min_perm(hash_shingles(shingles), num_perm, seed)


def shingle_hashes(words: list[str], n: int) -> np.ndarray:
    """The :func:`hash_shingles` values of the word ``n``-gram shingles of ``words`` (fewer than ``n`` words: one
    shingle), without building a string per shingle: the words are joined and encoded once and every shingle is
    a slice of that buffer, its offsets from a cumulative sum. Repeated shingles hash to repeated values, which
    MinHash ignores, so no set is built either. Same values, same signatures, same clusters."""
    if not words:
        return np.zeros(0, dtype=np.uint64)
    joined = " ".join(words)
    buf = joined.encode("utf-8")
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words)) if joined.isascii() else \
        np.fromiter((len(w.encode("utf-8")) for w in words), dtype=np.int64, count=len(words))
    ends = np.cumsum(sizes + 1) - 1                 # byte offset just past each word
    starts = ends - sizes
    k = min(n, len(words))
    lo, hi = starts[:len(words) - k + 1].tolist(), ends[k - 1:].tolist()
    digest = xxhash.xxh64_intdigest
    return np.fromiter((digest(buf[a:b]) & 0xFFFFFFFF for a, b in zip(lo, hi)), dtype=np.uint64,
                       count=len(lo))


def text_signature(words: list[str], n: int, num_perm: int = 128, seed: int = 42) -> np.ndarray:
    """``signature(shingles(text, n))`` for ``words = words(text)``, computed by :func:`shingle_hashes`: the fast
    path of near-dedup (all-max when there is no word)."""
    return _min_perm(shingle_hashes(words, n), num_perm, seed)


def _min_perm(hv: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    if hv.size == 0:
        return np.full(num_perm, MAX_HASH, dtype=np.uint64)
    a, b = _perms(num_perm, seed)
    with np.errstate(over="ignore"):        # one (num_perm, n) array, updated in place, min along rows
        phv = np.multiply.outer(a, hv)
        phv += b[:, None]
        phv >>= SHIFT
    return phv.min(axis=1)


def band_keys(sig: np.ndarray, bands: int, rows: int) -> list[str]:
    """One key per band: ``"<band>:<hex digest of the band's rows>"``."""
    out = []
    for i in range(bands):
        chunk = sig[i * rows:(i + 1) * rows].astype(np.uint32).tobytes()
        out.append(f"{i}:{xxhash.xxh64_hexdigest(chunk)}")
    return out


def estimate_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Signature agreement: the MinHash estimate of Jaccard similarity."""
    return float(np.mean(a == b))


def jaccard(a: set, b: set) -> float:
    """Exact Jaccard similarity of two sets (0 when both are empty)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def optimal_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """``(bands, rows)`` with ``bands*rows <= num_perm`` whose S-curve ``(1/b)^(1/r)`` is nearest ``threshold``."""
    best = (1, num_perm)
    best_err = float("inf")
    for rows in range(1, num_perm + 1):
        bands = num_perm // rows
        err = abs((1 / bands) ** (1 / rows) - threshold)
        if err < best_err:
            best, best_err = (bands, rows), err
    return best
