"""A secret found anywhere in a record is replaced everywhere in it: SWE-agent's tool arguments without the command
name, JSON-escaped copies, copies printed where nothing names them; the copies are counted in the evidence."""
from __future__ import annotations

import json

from swemine.filters.secrets import Finding, SecretScanner, copied_secrets, scrub_record, scrub_row, secrets_stage_fn

PW = "Xk9fLq2ZrTy81!"


def test_a_password_found_in_the_action_is_replaced_in_its_tool_arguments():
    rec = {"record_id": "r", "extra_json": "{}", "steps": [
        {"action_text": f"mysql -uroot -p{PW} -h 127.0.0.1 shop",
         "tool_args_json": json.dumps({"args": f"-uroot -p{PW} -h 127.0.0.1 shop"})},
        {"observation": f"$ history | tail -1\n  42  mysql -h db -u root {PW}"}]}
    (out,) = secrets_stage_fn("trajectory")(rec)
    assert PW not in json.dumps(out)
    assert json.loads(out["steps"][0]["tool_args_json"]) == {"args": "-uroot -p<SECRET:Command-line Secret> -h 127.0.0.1 shop"}
    assert out["steps"][1]["observation"].endswith("-u root <SECRET:Command-line Secret>")
    assert json.loads(out["extra_json"])["scrubbed"] == {"Command-line Secret": 3}


def test_escaped_copies_both_ways_and_the_evidence_marks_copies():
    quoted = 'Qz7"Wk2\\Lp9'                         # a quote and a backslash inside the value
    action = f"mysql -u root -p'{quoted}' shop"
    rec = {"record_id": "r", "steps": [{"action_text": action,
                                        "tool_args_json": json.dumps({"args": f"-u root -p'{quoted}' shop"})}]}
    out, evidence = scrub_record(rec, SecretScanner())
    assert quoted not in json.dumps(out) and json.dumps(quoted)[1:-1] not in out["steps"][0]["tool_args_json"]
    assert json.loads(out["steps"][0]["tool_args_json"]) == {"args": "-u root -p'<SECRET:Command-line Secret>' shop"}
    assert [(e["field"], e.get("copy", False)) for e in evidence] == [("steps[0].action_text", False),
                                                                       ("steps[0].tool_args_json", True)]
    # a value found escaped (in a JSON string) is also replaced where it is written plainly
    row = {"excerpt": json.dumps({"command": action}), "message": f"value was {quoted}"}
    assert scrub_row(row, SecretScanner())["message"] == "value was <SECRET:Command-line Secret>"


def test_copies_need_six_characters_and_a_secret_finding():
    seen = {"a=1 token=Zq7Wk": [Finding("secret", "Secret Assignment", 10, 15)], "Zq7Wk here": [],
            "mail bob@fictional-mail.org": [Finding("pii", "email", 5, 27)], "bob@fictional-mail.org!": []}
    assert copied_secrets(seen) == seen                                   # a short value, an e-mail: no copies
    seen = {"token=Zq7Wk2Lp": [Finding("secret", "Secret Assignment", 6, 14)], "x Zq7Wk2Lp y Zq7Wk2Lp": []}
    assert copied_secrets(seen)["x Zq7Wk2Lp y Zq7Wk2Lp"] == [
        Finding("secret", "Secret Assignment", 2, 10, copy=True), Finding("secret", "Secret Assignment", 13, 21, copy=True)]


def test_a_record_without_secrets_is_returned_as_is():
    rec = {"record_id": "r", "steps": [{"action_text": "ls -la", "observation": "total 0"}]}
    out, evidence = scrub_record(rec, SecretScanner())
    assert out is rec and evidence == []
