"""swemine: mine coding-agent trajectories and repositories into localization, error-diagnosis and FIM data.

The repository keeps one folder per layer (``corpora/``, ``miners/``, ``filters/``, ``manifests/``,
``launchers/``, ``pipelines/``); they install as subpackages of this one namespace (see ``pyproject.toml``).
"""
__version__ = "0.1.0"
