"""Two targets whose lines overlap cannot be masked as one sample: the holes would overlap."""
import dataclasses

import pytest

from swemine.miners.fim.masking import MaskError, mask
from swemine.miners.fim.parse import FileParser

SRC = "def f(x):\n    y = x + 1\n    return y * 2\n\n\ndef g(z):\n    return z - 1\n"


def test_overlapping_targets_are_refused():
    f, g = FileParser()({"path": "n.py", "content": SRC}).functions
    assert (f.start_line, f.end_line, g.start_line, g.end_line) == (1, 3, 6, 7)
    assert mask(SRC, [f, g]).middle.startswith("    y = x + 1")            # disjoint targets mask fine
    twin = dataclasses.replace(f, qualname="f_again")                      # lines 1-3 again: overlaps f
    with pytest.raises(MaskError) as err:
        mask(SRC, [f, twin])
    assert err.value.reason == "overlapping_targets"
