"""A small client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, a local server) that returns
schema-validated JSON, never pays twice for the same prompt, and stops cleanly at a budget.

- transport: the ``openai`` client with ``base_url``; its retries (exponential backoff on 408/409/429/5xx and
  timeouts, honouring ``retry-after-ms`` / ``retry-after``) and timeouts; a semaphore bounds concurrency;
- cache: one JSON file per request under ``cache_dir``, keyed by sha256 over (model, messages, params, schema);
  the raw answer is cached whether or not it validates, so a re-run repeats no request;
- budget: ``max_requests`` / ``max_tokens`` per client; once spent, :class:`BudgetExceeded` is raised *before*
  sending, and callers mark the remaining items "not diagnosed";
- output: the message content parsed as JSON and checked with :func:`validate_json` (a small JSON-Schema
  subset: type, properties, required, additionalProperties, items, enum, minimum/maximum, minLength, minItems);
- batch: :meth:`LLMClient.batch_lines` writes the uncached requests as OpenAI Batch API input lines
  (``custom_id`` = cache key); :meth:`LLMClient.ingest_batch_output` loads the results into the cache, after
  which a normal run answers everything from the cache.

The FIM miner reuses :meth:`LLMClient.chat_json` for rationales and critiques.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 4


class LLMError(Exception):
    """Base class; ``reason`` is a short machine-readable code used as a reject reason."""
    reason = "llm_error"


class BudgetExceeded(LLMError):
    reason = "budget_exceeded"


class BadAnswer(LLMError):
    """The endpoint answered, but not with JSON that fits the schema (``reason``: llm_bad_json / llm_schema)."""

    def __init__(self, reason: str, message: str, content: str = ""):
        super().__init__(message)
        self.reason, self.content = reason, content


class Unavailable(LLMError):
    """Transport failure after all retries (timeouts, 5xx, connection refused)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def validate_json(value: Any, schema: dict, path: str = "$") -> list[str]:
    """Errors of ``value`` against ``schema`` (a JSON-Schema subset) as ``"<path>: <problem>"`` strings."""
    errs: list[str] = []
    typ = schema.get("type")
    if typ is not None:
        types = typ if isinstance(typ, list) else [typ]
        if not any(_is_type(value, t) for t in types):
            return [f"{path}: expected {typ}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {value!r} not in enum")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errs.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errs.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                errs += validate_json(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errs.append(f"{path}.{name}: required")
        for name, item in value.items():
            if name in props:
                errs += validate_json(item, props[name], f"{path}.{name}")
            elif schema.get("additionalProperties") is False:
                errs.append(f"{path}.{name}: not allowed")
    return errs


def _is_type(value: Any, typ: str) -> bool:
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(typ, object))


def cache_key(model: str, messages: list[dict], params: dict, schema: dict | None) -> str:
    """sha256 over the canonical JSON of everything that determines the answer."""
    blob = json.dumps({"model": model, "messages": messages, "params": params, "schema": schema},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class ClientStats:
    requests: int = 0          # chat calls that went to the endpoint (retries inside the openai client not included)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    bad_answers: int = 0
    failures: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict:
        return {**self.__dict__, "total_tokens": self.total_tokens}


@dataclass
class LLMClient:
    """Cached, budgeted JSON chat over an OpenAI-compatible endpoint. ``api_key`` defaults to
    ``$OPENAI_API_KEY`` (then ``"sk-local"`` for keyless local servers); ``base_url`` to ``$OPENAI_BASE_URL``."""
    base_url: str | None = None
    api_key: str | None = None
    model: str = ""
    cache_dir: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    concurrency: int = 4
    max_requests: int | None = None
    max_tokens_budget: int | None = None
    default_params: dict = field(default_factory=lambda: {"temperature": 0.0, "seed": 0})
    stats: ClientStats = field(default_factory=ClientStats)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(max(1, self.concurrency))
        self._client = None

    def _openai(self):
        if self._client is None:
            from openai import OpenAI
            self._client = OpenAI(base_url=self.base_url or os.environ.get("OPENAI_BASE_URL"),
                                  api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or "sk-local",
                                  timeout=self.timeout_s, max_retries=self.max_retries)
        return self._client

    # -- cache ----------------------------------------------------------------------------------------------
    def _cache_path(self, key: str) -> Path | None:
        return Path(self.cache_dir) / key[:2] / f"{key}.json" if self.cache_dir else None

    def _cache_get(self, key: str) -> dict | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return None

    def _cache_put(self, key: str, entry: dict) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    # -- budget ---------------------------------------------------------------------------------------------
    def budget_left(self) -> bool:
        """False once either cap is reached."""
        s = self.stats
        if self.max_requests is not None and s.requests >= self.max_requests:
            return False
        return self.max_tokens_budget is None or s.total_tokens < self.max_tokens_budget

    def reserve(self) -> bool:
        """Take one request from the budget (False when spent). Callers that fan out concurrently reserve in
        input order first, so which items end up "not diagnosed" does not depend on thread timing."""
        with self._lock:
            if not self.budget_left():
                return False
            self.stats.requests += 1
            return True

    def is_cached(self, messages: list[dict], schema: dict | None = None, model: str | None = None,
                  params: dict | None = None) -> bool:
        """Whether this exact request is answered from the cache (costs nothing)."""
        key = cache_key(model or self.model, messages, {**self.default_params, **(params or {})}, schema)
        path = self._cache_path(key)
        return bool(path and path.is_file())

    # -- the call -------------------------------------------------------------------------------------------
    def chat_text(self, messages: list[dict], model: str | None = None, params: dict | None = None,
                  schema: dict | None = None, schema_name: str = "answer", reserved: bool = False) -> str:
        """The assistant message content for ``messages`` (cached; budgeted unless ``reserved`` — the caller
        already took the request with :meth:`reserve`; retried by the openai client)."""
        model = model or self.model
        params = {**self.default_params, **(params or {})}
        key = cache_key(model, messages, params, schema)
        hit = self._cache_get(key)
        if hit is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return hit["content"]
        if not reserved and not self.reserve():
            raise BudgetExceeded(f"budget spent: {self.stats.as_dict()}")
        kwargs = self._request_body(messages, model, params, schema, schema_name)
        del kwargs["model"], kwargs["messages"]
        import openai
        try:
            with self._slots:
                resp = self._openai().chat.completions.create(model=model, messages=messages, **kwargs)
        except openai.APITimeoutError as exc:
            self._fail()
            raise Unavailable("llm_timeout", str(exc)) from exc
        except openai.APIStatusError as exc:
            self._fail()
            raise Unavailable(f"llm_http_{exc.status_code}", str(exc)[:500]) from exc
        except (openai.APIError, ValueError) as exc:
            self._fail()
            raise Unavailable(f"llm_{type(exc).__name__}", str(exc)[:500]) from exc
        content = (resp.choices[0].message.content if resp.choices else "") or ""
        usage = getattr(resp, "usage", None)
        with self._lock:
            self.stats.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.stats.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        self._cache_put(key, {"model": model, "content": content,
                              "usage": usage.model_dump() if hasattr(usage, "model_dump") else None})
        return content

    # -- OpenAI Batch API: emit the uncached requests, ingest the results into the cache ------------------------
    def _request_body(self, messages: list[dict], model: str, params: dict, schema: dict | None,
                      schema_name: str = "answer") -> dict:
        body = {"model": model, "messages": messages, **params}
        if schema is not None and "response_format" not in params:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
        return body

    def batch_lines(self, requests: list[tuple[list[dict], dict | None]], params: dict | None = None) -> list[dict]:
        """Batch API input lines (``custom_id`` = cache key) for the ``(messages, schema)`` pairs not cached yet."""
        params = {**self.default_params, **(params or {})}
        lines, seen = [], set()
        for messages, schema in requests:
            key = cache_key(self.model, messages, params, schema)
            if key in seen or self._cache_get(key) is not None:
                continue
            seen.add(key)
            lines.append({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                          "body": self._request_body(messages, self.model, params, schema)})
        return lines

    def ingest_batch_output(self, jsonl: str) -> dict:
        """Put a Batch API output file's successful answers into the cache; returns counts (ingested, failed)."""
        done = failed = 0
        for line in jsonl.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            resp = row.get("response") or {}
            body = resp.get("body") or {}
            if resp.get("status_code") != 200 or not body.get("choices"):
                failed += 1
                continue
            self._cache_put(row["custom_id"], {"model": body.get("model"), "usage": body.get("usage"),
                                               "content": body["choices"][0]["message"].get("content") or ""})
            done += 1
        return {"ingested": done, "failed": failed}

    def _fail(self) -> None:
        with self._lock:
            self.stats.failures += 1

    def chat_json(self, messages: list[dict], schema: dict, model: str | None = None,
                  params: dict | None = None, reserved: bool = False) -> dict:
        """The answer parsed as a JSON object and validated against ``schema``; raises :class:`BadAnswer`
        (``llm_bad_json`` / ``llm_schema``), :class:`BudgetExceeded` or :class:`Unavailable`."""
        content = self.chat_text(messages, model, params, schema, reserved=reserved)
        try:
            value = json.loads(_strip_fences(content))
        except ValueError as exc:
            self._bad()
            raise BadAnswer("llm_bad_json", f"answer is not JSON: {exc}", content) from exc
        errors = validate_json(value, schema)
        if errors:
            self._bad()
            raise BadAnswer("llm_schema", "; ".join(errors[:5]), content)
        return value

    def _bad(self) -> None:
        with self._lock:
            self.stats.bad_answers += 1


def _strip_fences(text: str) -> str:
    """Models sometimes wrap JSON in a ```json fence; accept that, nothing looser."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t
