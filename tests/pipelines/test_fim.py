"""``swemine run fim`` end to end on a small real git repo (FnApiRunner), shards read back with ``datasets``."""
import json

import datasets
import pytest

from swemine.corpora.repos import open_repo
from swemine.miners.fim.mine import mine_files
from swemine.miners.fim.scoring import FimConfig
from swemine.pipelines.cli.main import main
from tests.gitutil import commit_files, init_repo


def _work_file() -> str:
    body = "\n".join(f"    v{i} = x + {i}\n    if v{i} > 3:\n        x += v{i}" for i in range(4))
    funcs = [f"def work_{k}(x: int, scale: float = 1.0) -> int:\n    \"\"\"Work {k}.\"\"\"\n{body}\n    return clamp(x)\n"
             for k in range(3)]
    return ("from lib.util import clamp\n\n\n" + "\n\n".join(funcs) + "\n\n"
            + "\n".join(f"# padding {i}" for i in range(12)) + "\n")


UTIL = "def clamp(x):\n    return max(0, min(x, 9))\n"
MAIN = ("from lib.work import work_0, work_1\n\n\n"
        "def run(x):\n    return work_0(x, 2.0) + work_1(x, scale=3.0)\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = init_repo(str(tmp_path_factory.mktemp("fimrepo") / "acme__tools"))
    sha = commit_files(path, {"lib/work.py": _work_file(), "lib/util.py": UTIL, "app/main.py": MAIN,
                              "broken.py": "def f(:\n  pass\n",
                              "LICENSE": "Permission is hereby granted, free of charge, to any person"}, "init")
    return path, sha


def test_cli_fim_psm_deepseek(repo, tmp_path, capsys):
    repo, sha = repo
    out = str(tmp_path / "run")
    rc = main(["run", "fim", "--source", f"{repo}@{sha}", "--format", "psm", "--model-family", "deepseek-coder",
               "--mixture", "none", "--output", out])
    assert rc == 0
    printed = capsys.readouterr().out
    assert ("fim: files=4, files_parsed=3, functions=5, selected_singles=3, selected_pairs=0, selected_triples=0, "
            "samples=3") in printed
    ds = datasets.load_dataset("parquet", data_files=f"{out}/fim/train-*.parquet", split="train")
    rows = sorted(ds.to_list(), key=lambda r: r["start_line"])
    assert [r["func_name"] for r in rows] == ["work_0", "work_1", "work_2"]
    content = _work_file()
    for r in rows:
        assert (r["repo"], r["commit"], r["path"], r["license"]) == ("acme/tools", sha, "lib/work.py", "MIT")
        assert r["prefix"] + r["middle"] + r["suffix"] == content
        assert r["text"].startswith("<｜fim▁begin｜>") and r["text"].endswith("<｜end▁of▁sentence｜>")
        assert r["graph_stats"]["cross_file_in"] == 2 and r["format"] == "psm"
    # work_0/work_1 gain a cross-file caller: app/main.py::run (caller term 0.30 * sp/3)
    parts = [json.loads(r["extra_json"])["inferability_parts"][0]["caller"] for r in rows]
    assert parts == [(0.5 + 0.05 + 0.15 + 0.10) / 3, (0.5 + 0.05 + 0.12 + 0.10) / 3, 0.0]
    manifest = json.load(open(f"{out}/manifest.json"))
    assert manifest["balance_problems"] == []
    assert manifest["stages"]["fim_parse"]["rejected"] == {"syntax_error": 1}
    assert manifest["stages"]["fim_select"]["filtered"] == {"file_too_short": 2}
    assert manifest["fim_distribution"]["all"]["loc"] == {"p10": 15, "p50": 15, "p90": 15, "n": 3}
    # the Beam run and the in-process miner agree record for record
    plain = mine_files(open_repo(repo).iter_source_files(commit=sha), FimConfig(mixture=()), fmt="psm",
                       family="deepseek-coder", config_hash=manifest["config_hash"])
    assert sorted(r["record_id"] for r in plain.rows) == sorted(r["record_id"] for r in rows)
    assert plain.stats["samples"] == 3


def test_repo_level_layout_beam_equals_in_process(repo, tmp_path):
    repo, sha = repo
    out = str(tmp_path / "run")
    assert main(["run", "fim", "--source", f"{repo}@{sha}", "--format", "repo", "--mixture", "none",
                 "--output", out]) == 0
    rows = sorted(datasets.load_dataset("parquet", data_files=f"{out}/fim/train-*.parquet", split="train").to_list(),
                  key=lambda r: r["start_line"])
    assert len(rows) == 3
    for r in rows:   # the file work.py calls into comes first, then the target file's PSM sample
        assert r["text"] == ("<|repo_name|>acme/tools\n<|file_sep|>lib/util.py\n" + UTIL + "\n"
                             "<|file_sep|>lib/work.py\n<|fim_prefix|>" + r["prefix"] + "<|fim_suffix|>"
                             + r["suffix"] + "<|fim_middle|>" + r["middle"] + "<|endoftext|>")
    plain = mine_files(open_repo(repo).iter_source_files(commit=sha), FimConfig(mixture=()), fmt="repo",
                       family="qwen2.5-coder", config_hash=json.load(open(f"{out}/manifest.json"))["config_hash"])
    assert sorted((r["record_id"], r["text"]) for r in plain.rows) == sorted((r["record_id"], r["text"]) for r in rows)


def test_a_repository_listed_twice_is_emitted_once(repo, tmp_path):
    """Both listings are read and parsed; each file's samples come from one of its two copies (the repeated file
    keys meet in a combiner), and ``fim_emit`` counts each file once, as for one listing."""
    repo, sha = repo
    runs = {}
    for name, sources in (("once", [f"{repo}@{sha}"]), ("twice", [f"{repo}@{sha}", f"{repo}/@{sha}"])):
        args = [a for s in sources for a in ("--source", s)]
        assert main(["run", "fim", *args, "--format", "repo", "--mixture", "none", "--output", str(tmp_path / name)]) == 0
        rows = datasets.load_dataset("parquet", data_files=f"{tmp_path / name}/fim/train-*.parquet", split="train")
        runs[name] = (sorted((r["record_id"], r["text"]) for r in rows),
                      json.load(open(tmp_path / name / "manifest.json"))["stages"])
    (once, one), (twice, two) = runs["once"], runs["twice"]
    assert len(once) == 3 and twice == once
    assert (one["fim_parse"]["in"], two["fim_parse"]["in"]) == (4, 8)
    assert one["fim_emit"] == two["fim_emit"] and two["fim_emit"]["in"] == 4 and two["fim_emit"]["out"] == 3


def test_rationale_stage_in_beam(repo, tmp_path):
    from swemine.miners.fim.rationale import DIMENSIONS
    from tests.clients.fake_openai import FakeOpenAI

    def responder(body):
        if "response_format" in body:
            score = 2 if "`work_2`" in body["messages"][0]["content"] else 5
            dim = {d: {"score": score, "reason": "r"} for d in DIMENSIONS}
            return json.dumps({"feasibility": {"is_feasible": True, "confidence": 1.0, "infeasible_factors": []},
                               "functions": [{"name": "f", "is_feasible": True, **dim, "overall_score": score}],
                               "group_coherence": 5, "overall_score": score, "should_discard": False})
        return "### Reasoning\nsum of offsets\n### Implementation\n```python\ndef f(): ...\n```"

    repo, sha = repo
    out = str(tmp_path / "run")
    with FakeOpenAI(responder) as server:
        assert main(["run", "fim", "--source", f"{repo}@{sha}", "--mixture", "none", "--rationale",
                     "--llm-base-url", server.base_url, "--llm-model", "m", "--llm-cache-dir", str(tmp_path / "c"),
                     "--output", out]) == 0
    manifest = json.load(open(f"{out}/manifest.json"))
    assert manifest["stages"]["fim_rationale"]["in"] == 3 and manifest["stages"]["fim_rationale"]["out"] == 2
    assert manifest["stages"]["fim_rationale"]["filtered"] == {"critic_not_executable": 1}
    rows = datasets.load_dataset("parquet", data_files=f"{out}/fim/train-*.parquet", split="train").to_list()
    assert sorted(r["func_name"] for r in rows) == ["work_0", "work_1"]
    assert all(r["messages"][1]["content"].startswith("### Reasoning\nsum of offsets") for r in rows)
    assert all(r["metadata"]["overall_score"] == 5.0 for r in rows)


def test_fim_samples_quoting_a_benchmark_solution_are_removed(repo, tmp_path):
    """The filter flags apply to FIM samples: a file that contains a (fictional, HumanEval-shaped) benchmark
    solution yields no sample; every drop names the benchmark item."""
    repo, sha = repo
    bench = tmp_path / "he.jsonl"
    solution = "    v0 = x + 0\n    if v0 > 3:\n        x += v0\n    v1 = x + 1\n    if v1 > 3:\n        x += v1\n"
    bench.write_text(json.dumps({"task_id": "HumanEval/999", "prompt": "def work(x):\n", "entry_point": "work",
                                 "canonical_solution": solution, "test": "def check(f):\n    pass\n"}) + "\n")
    out = tmp_path / "run"
    assert main(["run", "fim", "--source", f"{repo}@{sha}", "--format", "psm", "--mixture", "none",
                 "--benchmark", f"he={bench}", "--decontam-levels", "content", "--output", str(out)]) == 0
    from swemine.manifests.shards import read_rows
    kept = read_rows(str(out), "fim/train")
    dropped = [r for r in read_rows(str(out), "filtered/filtered") if r["stage"] == "decontam"]
    assert dropped and all(json.loads(r["evidence_json"])["item_id"] == "HumanEval/999" for r in dropped)
    assert all(r["path"] != "lib/work.py" for r in kept)
    assert (out / "contamination_report.md").exists()
