"""MinHash signatures, LSH band keys and the band/row choice against an independent big-integer computation."""
import struct

import numpy as np
import pytest
import xxhash

from swemine.filters.minhash import band_keys, estimate_jaccard, hash_shingles, jaccard, optimal_bands, signature

M64 = 2 ** 64


def reference_signature(shingles, num_perm, seed):
    """The module docstring's construction in Python integers: odd ``a`` and ``b`` from a seeded
    ``RandomState``; ``h`` = low 32 bits of xxh64; value = min over shingles of ``((a·h + b) mod 2^64) >> 32``."""
    rng = np.random.RandomState(seed)
    a = [int(x) | 1 for x in rng.randint(1, M64 - 1, size=num_perm, dtype=np.uint64)]
    b = [int(x) for x in rng.randint(0, M64 - 1, size=num_perm, dtype=np.uint64)]
    hs = [xxhash.xxh64_intdigest(s.encode("utf-8")) % 2 ** 32 for s in shingles]
    return [min(((ai * h + bi) % M64) >> 32 for h in hs) for ai, bi in zip(a, b)]


SHINGLES = {"def add ( a", "add ( a ,", "( a , b", "a , b )", "return a + b", "çé unicode"}


def test_hash_shingles_are_the_low_32_bits_of_xxh64():
    got = hash_shingles(["x", "çé"])
    assert got.dtype == np.uint64
    assert got.tolist() == [xxhash.xxh64_intdigest(b"x") & 0xFFFFFFFF, xxhash.xxh64_intdigest("çé".encode()) % 2 ** 32]


@pytest.mark.parametrize("num_perm,seed", [(128, 42), (16, 7)])
def test_signature_matches_the_integer_construction(num_perm, seed):
    sig = signature(SHINGLES, num_perm, seed)
    assert sig.dtype == np.uint64 and sig.shape == (num_perm,)
    assert sig.tolist() == reference_signature(SHINGLES, num_perm, seed)
    assert int(sig.max()) < 2 ** 32                                   # values are 32-bit


def test_defaults_and_empty_set():
    assert signature(SHINGLES).tolist() == reference_signature(SHINGLES, 128, 42)   # num_perm 128, seed 42
    empty = signature([], 8)
    assert empty.tolist() == [0xFFFFFFFF] * 8                        # all-max: agrees with no real signature


def test_estimate_is_the_share_of_equal_slots():
    other = SHINGLES - {"return a + b"} | {"return a - b"}
    s1, s2 = signature(SHINGLES, 64), signature(other, 64)
    r1, r2 = reference_signature(SHINGLES, 64, 42), reference_signature(other, 64, 42)
    assert estimate_jaccard(s1, s2) == sum(x == y for x, y in zip(r1, r2)) / 64
    assert estimate_jaccard(np.array([1, 2, 3, 4]), np.array([1, 0, 3, 0])) == 0.5


def test_exact_jaccard():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 2 / 4
    assert jaccard(set(), set()) == 0.0
    assert jaccard({1}, set()) == 0.0


def test_band_keys_hash_each_band_of_uint32_rows():
    sig = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.uint64)
    keys = band_keys(sig, 3, 2)                       # rows 0-1, 2-3, 4-5; the 7th value is in no band
    expected = [f"{i}:{xxhash.xxh64_hexdigest(struct.pack('<2I', *sig[2 * i:2 * i + 2].tolist()))}"
                for i in range(3)]
    assert keys == expected
    # equal bands of different signatures share a key; the band index keeps positions apart
    assert band_keys(np.array([9, 9, 5, 6], dtype=np.uint64), 2, 2)[1] == band_keys(
        np.array([1, 1, 5, 6], dtype=np.uint64), 2, 2)[1] == "1:" + xxhash.xxh64_hexdigest(struct.pack("<2I", 5, 6))


def test_optimal_bands_by_hand():
    # num_perm 4: rows 1 -> 4 bands, S-curve point (1/4)^1 = 0.25; rows 2 -> 2 bands, (1/2)^(1/2) = 0.7071;
    #             rows 3, 4 -> 1 band, 1.0
    assert optimal_bands(0.3, 4) == (4, 1)            # |0.25-0.3| = 0.05 is smallest
    assert optimal_bands(0.7, 4) == (2, 2)            # |0.7071-0.7| = 0.0071
    assert optimal_bands(0.99, 4) == (1, 3)           # rows 3 and 4 tie at 0.01: the first (fewer rows) wins
    # num_perm 1: only rows 1, bands 1
    assert optimal_bands(0.5, 1) == (1, 1)
