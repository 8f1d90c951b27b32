"""End to end on CPU: ``swemine run fim`` mines raw PSM samples from real stdlib files, and the launcher's
worker mid-trains the tiny model on that run directory (skipped until the FIM pipeline is present)."""
import json
import shutil
import sysconfig

import pytest

pytest.importorskip("swemine.pipelines.fim")

from swemine.launchers import train  # noqa: E402
from swemine.pipelines import cli  # noqa: E402

FILES = ("textwrap.py", "shlex.py", "fnmatch.py", "glob.py", "heapq.py", "bisect.py")


def test_fim_run_dir_trains(tmp_path, tiny_model_dir):
    src = tmp_path / "src"
    src.mkdir()
    for name in FILES:
        shutil.copy(f"{sysconfig.get_paths()['stdlib']}/{name}", src / name)
    run_dir = tmp_path / "fim-run"
    assert cli.main(["run", "fim", "--repos", str(src), "--format", "psm", "--mixture", "none",
                     "--output", str(run_dir)]) == 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    rows = sum(o["rows"] for o in manifest["outputs"] if o["path"].startswith("fim/"))
    assert rows > 20

    cfg = train.TrainConfig(data={"fim": str(run_dir)}, model=str(tiny_model_dir), output=str(tmp_path / "out"),
                            format="psm", seq_len=1024, global_batch=4, micro_batch=4, max_steps=12,
                            save_steps=12, learning_rate=3e-3, logging_steps=1)
    summary = train.run(cfg)
    fim = summary["data"]["parts"]["fim"]
    assert fim["rows"] == rows == fim["docs"] + sum(fim["rejected"].values())
    assert fim["docs"] >= 20 and set(fim["rejected"]) <= {"fim_middle_too_long"}
    assert summary["global_step"] == 12
    assert summary["last_loss"] < summary["first_loss"] - 0.5
