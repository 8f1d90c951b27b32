"""Every chat row's answer holds exactly the sections its prompt asks for, with and without the rationale stage."""
import re

from swemine.clients.llm import LLMClient
from swemine.miners.fim.formats import asks_for_reasoning, requested_sections
from swemine.miners.fim.mine import mine_files
from swemine.miners.fim.rationale import Rationale
from swemine.miners.fim.scoring import FimConfig
from tests.clients.fake_openai import FakeOpenAI
from tests.miners.fim.test_rationale import _critic, _work_file


def answer_sections(answer: str) -> list[str]:
    """Top-level ``### Reasoning`` / ``### Implementation`` headings of an answer, in order."""
    return re.findall(r"^### (Reasoning|Implementation)$", answer, re.M)


def _rows():
    src = {"record_id": "f1", "repo": "o/r", "commit": "c", "path": "w.py", "content": _work_file()}
    return mine_files([src], FimConfig(mixture=None), fmt="chat").rows


def test_without_rationale_the_prompt_asks_for_the_implementation_only():
    rows = _rows()
    assert [r["func_name"] for r in rows] == ["work_0", "work_1", "work_2"]          # three single-function rows
    for row in rows:
        prompt, answer = (m["content"] for m in row["messages"])
        assert "Reasoning" not in prompt and "reason step by step" not in prompt.lower()
        assert requested_sections(prompt) == answer_sections(answer) == ["Implementation"], row["func_name"]


def test_with_rationale_the_prompt_asks_for_reasoning_and_the_answer_has_it(tmp_path):
    def respond(body):
        if "response_format" in body:
            return __import__("json").dumps(_critic("work_0", 5))
        return "### Reasoning\nAdds offsets.\n\n### Implementation\n```python\ndef f(): ...\n```"
    row = _rows()[0]
    with FakeOpenAI(respond) as server:
        stage = Rationale(LLMClient(base_url=server.base_url, model="gen", cache_dir=str(tmp_path)), "critic")
        kept = stage(row)[0]
    prompt, answer = (m["content"] for m in kept["messages"])
    assert requested_sections(prompt) == answer_sections(answer) == ["Reasoning", "Implementation"]
    assert server.requests[0]["body"]["messages"][0]["content"] == prompt     # what the generator was asked
    assert asks_for_reasoning(prompt) == prompt                                # asking twice changes nothing


def test_every_row_mined_from_stdlib_modules_agrees():
    import pathlib
    import sysconfig

    root = pathlib.Path(sysconfig.get_paths()["stdlib"])
    srcs = [{"record_id": p, "repo": "python/cpython", "commit": "c", "path": p, "content": (root / p).read_text()}
            for p in ("textwrap.py", "json/decoder.py", "json/encoder.py", "fnmatch.py", "shlex.py")]
    rows = mine_files(srcs, FimConfig(mixture=None), fmt="chat").rows
    kinds = {r["fim_split"] for r in rows}
    assert "single_function" in kinds and len(kinds) > 1           # single and multi-function prompts both met
    for row in rows:
        prompt, answer = (m["content"] for m in row["messages"])
        assert requested_sections(prompt) == answer_sections(answer) == ["Implementation"], row["record_id"]
