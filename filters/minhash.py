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
    hv = hash_shingles(shingles)
    if hv.size == 0:
        return np.full(num_perm, MAX_HASH, dtype=np.uint64)
    a, b = _perms(num_perm, seed)
    with np.errstate(over="ignore"):
        phv = (hv[:, None] * a[None, :] + b[None, :]) >> SHIFT
    return phv.min(axis=0)


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
