"""The optional rationale + critic stage against a real OpenAI-compatible server on 127.0.0.1."""
import json

from swemine.clients.llm import LLMClient, validate_json
from swemine.miners.fim.mine import mine_files
from swemine.miners.fim.rationale import CRITIC_SCHEMA, DIMENSIONS, Rationale, discard_reason, strip_special_tokens
from swemine.miners.fim.scoring import FimConfig
from tests.clients.fake_openai import FakeOpenAI


def _work_file() -> str:
    body = "\n".join(f"    v{i} = x + {i}\n    if v{i} > 3:\n        x += v{i}" for i in range(4))
    funcs = [f"def work_{k}(x: int, scale: float = 1.0) -> int:\n    \"\"\"Work {k}.\"\"\"\n{body}\n    return x\n"
             for k in range(3)]
    return "\n\n".join(funcs) + "\n\n" + "\n".join(f"# padding {i}" for i in range(12)) + "\n"


def _critic(name: str, score: int, feasible: bool = True) -> dict:
    dim = {d: {"score": score, "reason": "ok"} for d in DIMENSIONS}
    return {"feasibility": {"is_feasible": feasible, "confidence": 0.9, "infeasible_factors": []},
            "functions": [{"name": name, "is_feasible": feasible, **dim, "overall_score": score}],
            "group_coherence": 5, "overall_score": score, "should_discard": score < 4}


def _responder(body):
    prompt = body["messages"][0]["content"]
    if "response_format" in body:                       # the critic: work_1 scores 2, the others 5
        assert body["temperature"] == 0.3
        name = "work_1" if "`work_1`" in prompt else "work_0"
        return json.dumps(_critic(name, 2 if name == "work_1" else 5))
    assert body["temperature"] == 0.7 and "# <MASKED_FUNCTION_BODY>" in prompt
    if "`work_2`" in prompt:                            # a malformed completion
        return "just code, no sections"
    return "### Reasoning\nIt folds four offsets into x.<|fim_pad|>\n\n### Implementation\n```python\ndef f(): ...\n```"


def test_rationale_critic_rules(tmp_path):
    src = {"record_id": "f1", "repo": "o/r", "commit": "c", "path": "w.py", "content": _work_file()}
    rows = mine_files([src], FimConfig(mixture=()), fmt="chat").rows
    assert [r["func_name"] for r in rows] == ["work_0", "work_1", "work_2"]
    with FakeOpenAI(_responder) as server:
        client = LLMClient(base_url=server.base_url, model="gen", cache_dir=str(tmp_path / "cache"))
        stage = Rationale(client, critic_model="critic")
        kept, dropped, bad = (stage(r)[0] for r in rows)
        n_requests = len(server.requests)
        again = stage(rows[0])[0]                       # answered from the cache
        assert len(server.requests) == n_requests
    assert [r["body"]["model"] for r in server.requests] == ["gen", "critic", "gen", "critic", "gen"]
    # the user turn sent is the training user turn, byte for byte; special tokens stripped from the answer
    assert server.requests[0]["body"]["messages"][0]["content"] == kept["messages"][0]["content"]
    assert kept["messages"][1]["content"].startswith("### Reasoning\nIt folds four offsets into x.\n")
    assert kept["metadata"]["overall_score"] == 5.0 and kept["metadata"]["executability"] == 5.0
    assert json.loads(kept["extra_json"])["critic"]["overall_score"] == 5
    assert again == kept
    assert dropped["stage"] == "fim_rationale" and dropped["reason"] == "critic_not_executable"   # overall 2, exec 2
    assert json.loads(dropped["evidence_json"])["critic"]["overall_score"] == 2
    assert bad["reason"] == "llm_bad_format"
    assert client.stats.requests == 5


def test_discard_rules_and_schema():
    assert validate_json(_critic("f", 5), CRITIC_SCHEMA) == []
    assert discard_reason(_critic("f", 5), 1) is None
    assert discard_reason(_critic("f", 3), 1) == "critic_below_threshold"        # overall 3 < 4
    assert discard_reason(_critic("f", 1), 1) == "critic_not_executable"
    assert discard_reason(_critic("f", 5, feasible=False), 1) == "critic_infeasible"
    group = _critic("f", 5)
    group["functions"].append({**group["functions"][0], "name": "g"})
    assert discard_reason(group, 2) is None
    group["group_coherence"] = 2
    assert discard_reason(group, 2) == "critic_incoherent"
    assert strip_special_tokens("<|fim_prefix|>a<fim_suffix>b<｜fim▁hole｜>") == "ab"
