"""A trajectory's summary for the per-instance part of localization
(:func:`swemine.miners.localization.mine.localize_instance`).

What an instance's gold (the resolved runs' majority patch), scratch files and retrieval pairs read of each of its
trajectories, taken before the trajectories are grouped by instance, so that only this summary travels: who the
run is (ids and source, for a ``no_task`` reject), whether it resolved and its final patch (resolved runs only),
the paths it created (:class:`swemine.miners.localization.scratch.Created`), what each step displayed or a search
listed (:class:`swemine.miners.localization.negatives.Look`) and the paths it displayed before its first edit
(resolved runs only). Paths stay as the run named them: which gold file a path is depends on the gold, decided
per instance.
"""
from __future__ import annotations

from typing import NamedTuple

from swemine.miners.localization.negatives import Look, step_look
from swemine.miners.localization.scratch import Created, created_paths
from swemine.miners.localization.views import is_edit_step


class Summary(NamedTuple):
    record_id: str
    instance_id: str | None          # as the record has them (a reject repeats them)
    source_uri: str | None
    source_locator: str | None
    source_sha256: str | None
    resolved: bool | None
    final_patch: str                 # resolved runs only ("" otherwise)
    created: Created
    looks: tuple[Look, ...]          # steps that displayed a file or listed search hits
    pre_edit: tuple[str, ...]        # paths displayed before the first edit (resolved runs only)

    def order(self) -> tuple[str, str, str]:
        """An instance's runs are taken by record id, then by source (one file read under two paths)."""
        return self.record_id, self.source_uri or "", self.source_locator or ""


def summarize(traj: dict, mined: bool = True) -> Summary:
    """The :class:`Summary` of one trajectory record; ``mined=False`` (no task lists its instance, so it is only
    rejected): who it is, nothing it did."""
    looks, pre_edit, editing = [], [], False
    for step in traj.get("steps") or [] if mined else ():
        look = step_look(step)
        editing = editing or is_edit_step(step)
        if look.shown or look.searched:
            looks.append(look)
            if not editing:
                pre_edit.extend(path for path, _ in look.shown)
    resolved = traj.get("resolved")
    return Summary(traj.get("record_id") or "", traj.get("instance_id"), traj.get("source_uri"),
                   traj.get("source_locator"), traj.get("source_sha256"), resolved,
                   (traj.get("final_patch") or "") if resolved else "",
                   created_paths(traj) if mined else Created((), ()), tuple(looks), tuple(pre_edit) if resolved else ())
