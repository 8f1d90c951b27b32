"""Tiny benchmark files in the public schemas (HumanEval, MBPP, APPS, DS-1000, LiveCodeBench), fictional content."""
from __future__ import annotations

import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

HUMANEVAL = [
    {"task_id": "HumanEval/0", "entry_point": "braid_tokens",
     "prompt": 'def braid_tokens(left: list, right: list) -> list:\n    """Interleave two token lists, starting '
               'with the left one; leftover tokens of the longer list are appended at the end.\n    >>> '
               'braid_tokens([1, 3], [2])\n    [1, 2, 3]\n    """\n',
     "canonical_solution": "    merged = []\n    for pair_index in range(max(len(left), len(right))):\n"
                           "        if pair_index < len(left):\n            merged.append(left[pair_index])\n"
                           "        if pair_index < len(right):\n            merged.append(right[pair_index])\n"
                           "    return merged\n",
     "test": "def check(candidate):\n    assert candidate([1, 3], [2]) == [1, 2, 3]\n"},
    {"task_id": "HumanEval/1", "entry_point": "lantern_count",
     "prompt": 'def lantern_count(street: str) -> int:\n    """Count the lit lanterns, written as an asterisk, in a '
               'street drawing made of dots and asterisks.\n    >>> lantern_count(".*..*")\n    2\n    """\n',
     "canonical_solution": "    return sum(1 for glyph in street if glyph == '*')\n",
     "test": "def check(candidate):\n    assert candidate('.*..*') == 2\n"},
]
MBPP = [
    {"task_id": 601, "text": "Write a function that returns the number of vowels hidden in the names of a list of "
                             "fictional harbour towns.",
     "code": "def harbour_vowels(towns):\n    return sum(ch in 'aeiou' for town in towns for ch in town.lower())",
     "test_list": ["assert harbour_vowels(['Ostra']) == 2"], "test_setup_code": "", "challenge_test_list": []},
]
APPS = [
    {"problem_id": 4242, "question": "A shepherd on the planet Quillon counts sheep in base seven. Given the count "
                                     "written in base seven, print the number of sheep in base ten.",
     "solutions": json.dumps(["print(int(input(), 7))"]), "input_output": "{}", "difficulty": "introductory",
     "url": "https://example.invalid/4242", "starter_code": ""},
]
DS1000 = [
    {"prompt": "Problem:\nI have a dataframe of fictional comet sightings with columns 'comet' and 'night'. How do I "
               "keep only the first sighting of each comet, sorted by night?\nA:\n<code>\nimport pandas as pd\n",
     "reference_code": "result = df.sort_values('night').drop_duplicates('comet', keep='first')",
     "metadata": {"problem_id": 77, "library": "Pandas"}, "code_context": ""},
]
LIVECODEBENCH = [
    {"question_id": "lcb-9001", "question_title": "Moon gardens",
     "question_content": "On the moon colony every garden plot has a height written on a sign. A gardener walks from "
                         "the first plot to the last and waters a plot only when it is taller than every plot seen "
                         "before. Print how many plots get water.",
     "platform": "atcoder", "contest_id": "abc999", "contest_date": "2025-03-01T00:00:00", "difficulty": "easy",
     "starter_code": "", "public_test_cases": "[]", "private_test_cases": "", "metadata": "{}"},
]


def write_jsonl(path: pathlib.Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def write_all(tmp: pathlib.Path) -> dict[str, str]:
    """Write each fixture benchmark; DS-1000 as Parquet (``metadata`` as a JSON string), the rest as JSONL."""
    paths = {
        "humaneval": write_jsonl(tmp / "HumanEval.jsonl", HUMANEVAL),
        "mbpp": write_jsonl(tmp / "mbpp.jsonl", MBPP),
        "apps": write_jsonl(tmp / "apps_test.jsonl", APPS),
        "livecodebench": write_jsonl(tmp / "lcb.jsonl", LIVECODEBENCH),
    }
    rows = [{**r, "metadata": json.dumps(r["metadata"])} for r in DS1000]
    pq.write_table(pa.Table.from_pylist(rows), tmp / "ds1000.parquet")
    paths["ds1000"] = str(tmp / "ds1000.parquet")
    return paths
