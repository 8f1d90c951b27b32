"""The publish privacy scan on rows whose findings are known by construction."""
import pyarrow as pa
import pyarrow.parquet as pq

from swemine.manifests.privacy import PrivacyScanner, redact

TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"          # 4 + 36 characters: GitHub's token shape


def _shard(tmp_path, rows):
    path = tmp_path / "s.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


def test_counts_each_kind_per_column(tmp_path):
    rows = [
        {"source_uri": "/srv/run7/dumps/a.traj",                       # the run's own input root
         "steps": [{"action": f"export GH={TOKEN} && gh pr list",  # one secret, nested in a list of structs
                    "obs": "see /home/alice/proj/x.py and /testbed/pkg/y.py"}],  # one home path, one other path
         "text": "mail bob@corp.io; dns server 8.8.8.8:53; /home/<USER>/z is scrubbed"},  # e-mail, IP, no home path
        {"source_uri": "dumps/b.traj", "steps": [], "text": r"C:\Users\carol\AppData and 10.0.0.1 (private)"},
    ]
    report = PrivacyScanner(local_roots=["/srv/run7"]).scan_files([("traj", _shard(tmp_path, rows))])
    assert report.rows_scanned == 2
    assert dict(report.counts) == {
        ("traj", "source_uri", "local_root"): 1,
        ("traj", "steps.action", "secret"): 1,
        ("traj", "steps.obs", "home_path"): 1,
        ("traj", "steps.obs", "absolute_path"): 1,
        ("traj", "text", "email"): 1,
        ("traj", "text", "ip_address"): 1,
        ("traj", "text", "home_path"): 1,                               # carol's Windows profile
    }
    assert report.blocking == {"secret": 1, "home_path": 2, "local_root": 1}
    shown = "\n".join(report.describe())
    assert TOKEN not in shown and "alice" not in shown and "bob@corp.io" not in shown


def test_clean_rows_do_not_block(tmp_path):
    rows = [{"source_uri": "dumps/a.traj", "text": "def f():\n    return '/tmp'  # 1.2.3 version 2.0.0.1"}]
    report = PrivacyScanner().scan_files([("traj", _shard(tmp_path, rows))])
    assert report.blocking == {} and report.total("absolute_path") == 0


def test_redact_keeps_a_prefix_only():
    assert redact("alice") == "a****"
    assert redact("/home/alice/proj") == "/hom************"
