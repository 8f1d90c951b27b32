"""swemine pipelines, by layer: a module imports its own layer and the ones listed before it (``tests/test_layout.py``).

- config modules (no Beam): ``options`` (dataclass fields → flags), ``configs`` (the jobs' configs and table),
  ``outputs`` (the output prefixes);
- ``engine/``: the stage adapter, the runner, the local shard sink, Dataflow staging;
- ``steps/``: the parts several jobs share; ``jobs/``: one module per job; ``cli/``: the command line.
"""
