"""swemine pipelines: two layers that never import upward.

Beam layer: ``stage`` (the adapter around plain-Python stage functions) → ``runner`` (spec → Beam → shards +
manifest) → ``fronts`` (task files; trajectories read and joined once) and ``filtering`` / ``dedup_stage``
(the filter chain) → one module per job (``trajectories``, ``localization``, ``tasks_mining``, ``errors``,
``fim``) → ``default_job``.

CLI layer (no Beam at import): ``registry`` (command and job tables) → ``options`` + ``configs`` (typed job
configs, flags generated from them) → ``cli`` (parses; imports a command only when it runs) → ``run_cmd`` and
the ``*_cmd`` modules. ``outputs`` (the output-prefix table) is shared by both.
"""
