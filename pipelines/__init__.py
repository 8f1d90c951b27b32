"""swemine pipelines: three layers, each importing only the ones above it in this list.

Configs (no Beam): ``registry`` (command and job tables), ``options`` (dataclass fields → flags), ``configs``
(one frozen dataclass per job, ``resolve()``), ``outputs`` (the output-prefix table).

Beam layer: ``stage`` (the adapter around plain-Python stage functions) → ``runner`` (spec → Beam → shards +
manifest) → ``fronts`` (task files; trajectories read and joined once) and ``filtering`` / ``dedup_stage`` (the
filter chain) → one module per job (``trajectories``, ``localization``, ``tasks_mining``, ``errors``, ``fim``)
→ ``default_job``.

CLI: ``cli`` (parses; imports a command only when it runs) → ``run_cmd`` and the ``*_cmd`` modules.
"""
