"""The OpenAI-compatible JSON client against a real HTTP server on 127.0.0.1 with injected faults."""
import json
import time

import pytest

from swemine.clients.llm import BadAnswer, BudgetExceeded, LLMClient, Unavailable, cache_key, validate_json
from tests.clients.fake_openai import FakeOpenAI

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["answer", "score"],
          "properties": {"answer": {"type": "string", "minLength": 1},
                         "score": {"type": "number", "minimum": 0, "maximum": 1}}}


def _msgs(text):
    return [{"role": "user", "content": text}]


def _client(server, tmp_path, **kw):
    return LLMClient(base_url=server.base_url, api_key="sk-test", model="m-1", cache_dir=str(tmp_path / "cache"),
                     timeout_s=kw.pop("timeout_s", 5.0), max_retries=kw.pop("max_retries", 3), **kw)


def test_validate_json_subset():
    assert validate_json({"answer": "x", "score": 0.5}, SCHEMA) == []
    assert validate_json({"answer": "", "score": 2, "z": 1}, SCHEMA) == [
        "$.answer: shorter than 1", "$.score: 2 > maximum 1", "$.z: not allowed"]
    assert validate_json({"score": True}, SCHEMA) == ["$.answer: required", "$.score: expected number, got bool"]
    assert validate_json([1, "a"], {"type": "array", "items": {"type": "integer"}}) == [
        "$[1]: expected integer, got str"]


def test_retries_on_429_and_500_then_cache(tmp_path):
    with FakeOpenAI(lambda body: json.dumps({"answer": "ok", "score": 0.9})) as srv:
        srv.faults = [("status", 429, {"retry-after-ms": "50"}), ("status", 500, {"retry-after-ms": "20"})]
        client = _client(srv, tmp_path)
        t0 = time.time()
        assert client.chat_json(_msgs("hello"), SCHEMA) == {"answer": "ok", "score": 0.9}
        assert time.time() - t0 >= 0.07
        reqs = srv.chat_requests()
        assert len(reqs) == 3                                  # 429, 500, 200: two retries happened
        assert [r["headers"].get("x-stainless-retry-count") for r in reqs] == ["0", "1", "2"]
        body = reqs[-1]["body"]
        assert reqs[-1]["headers"]["authorization"] == "Bearer sk-test"
        assert body["model"] == "m-1" and body["temperature"] == 0.0 and body["seed"] == 0
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
        assert client.stats.requests == 1 and client.stats.total_tokens == 120
        # same prompt again, same client and a fresh client on the same cache: no request at all
        assert client.chat_json(_msgs("hello"), SCHEMA)["answer"] == "ok"
        fresh = _client(srv, tmp_path)
        assert fresh.chat_json(_msgs("hello"), SCHEMA)["answer"] == "ok"
        assert len(srv.chat_requests()) == 3
        assert client.stats.cache_hits == 1 and fresh.stats.cache_hits == 1 and fresh.stats.requests == 0
        # a different param is a different key
        assert cache_key("m-1", _msgs("hello"), {"temperature": 0.0, "seed": 0}, SCHEMA) != \
            cache_key("m-1", _msgs("hello"), {"temperature": 0.0, "seed": 1}, SCHEMA)
        client.chat_json(_msgs("hello"), SCHEMA, params={"seed": 1})
        assert len(srv.chat_requests()) == 4


def test_timeout_is_retried_then_reported(tmp_path):
    with FakeOpenAI(lambda body: json.dumps({"answer": "late", "score": 0.1})) as srv:
        srv.faults = [("sleep", 1.0), ("sleep", 1.0)]
        client = _client(srv, tmp_path, timeout_s=0.3, max_retries=1)
        with pytest.raises(Unavailable) as exc:
            client.chat_json(_msgs("slow"), SCHEMA)
        assert exc.value.reason == "llm_timeout"
        assert len(srv.chat_requests()) == 2
        assert client.stats.failures == 1
        # nothing was cached: the next call goes out again and succeeds
        assert client.chat_json(_msgs("slow"), SCHEMA)["answer"] == "late"
        assert len(srv.chat_requests()) == 3


def test_persistent_500_is_unavailable(tmp_path):
    with FakeOpenAI(lambda body: "{}") as srv:
        srv.faults = [("status", 503, {"retry-after-ms": "10"})] * 3
        with pytest.raises(Unavailable) as exc:
            _client(srv, tmp_path, max_retries=2).chat_json(_msgs("x"), SCHEMA)
        assert exc.value.reason == "llm_http_503" and len(srv.chat_requests()) == 3


def test_bad_answers_raise_and_are_cached(tmp_path):
    answers = {"a": "Sure! Here is the JSON you asked for: {answer: 1}",
               "b": json.dumps({"answer": "x", "score": 7}),
               "c": "```json\n" + json.dumps({"answer": "fenced", "score": 0}) + "\n```"}
    with FakeOpenAI(lambda body: answers[body["messages"][0]["content"]]) as srv:
        client = _client(srv, tmp_path)
        with pytest.raises(BadAnswer) as exc:
            client.chat_json(_msgs("a"), SCHEMA)
        assert exc.value.reason == "llm_bad_json" and exc.value.content.startswith("Sure!")
        with pytest.raises(BadAnswer) as exc:
            client.chat_json(_msgs("b"), SCHEMA)
        assert exc.value.reason == "llm_schema" and "maximum" in str(exc.value)
        assert client.chat_json(_msgs("c"), SCHEMA) == {"answer": "fenced", "score": 0}
        with pytest.raises(BadAnswer):
            client.chat_json(_msgs("a"), SCHEMA)               # re-run: answered from the cache
        assert len(srv.chat_requests()) == 3 and client.stats.bad_answers == 3


def test_malformed_http_body_is_unavailable(tmp_path):
    with FakeOpenAI(lambda body: "{}") as srv:
        srv.faults = [("garbage",)]
        with pytest.raises(Unavailable):
            _client(srv, tmp_path, max_retries=0).chat_json(_msgs("x"), SCHEMA)


def test_budget_caps_requests_and_tokens(tmp_path):
    with FakeOpenAI(lambda body: json.dumps({"answer": "y", "score": 1})) as srv:
        client = _client(srv, tmp_path, max_requests=2)
        client.chat_json(_msgs("1"), SCHEMA)
        client.chat_json(_msgs("2"), SCHEMA)
        with pytest.raises(BudgetExceeded):
            client.chat_json(_msgs("3"), SCHEMA)
        assert client.chat_json(_msgs("1"), SCHEMA)["answer"] == "y"   # cached answers stay free
        assert len(srv.chat_requests()) == 2
        by_tokens = _client(srv, tmp_path / "t", max_tokens_budget=200)
        by_tokens.chat_json(_msgs("4"), SCHEMA)
        by_tokens.chat_json(_msgs("5"), SCHEMA)                         # 120 < 200: allowed, now 240
        with pytest.raises(BudgetExceeded):
            by_tokens.chat_json(_msgs("6"), SCHEMA)
        assert len(srv.chat_requests()) == 4
