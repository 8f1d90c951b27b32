"""Function-aware FIM: tree-sitter structure (``parse``), the dependency graph (``graph``), Ĥ/Î scoring
(``scoring``), pairs and triples (``groups``), masking (``masking``), sample layouts (``formats``) and the
end-to-end miner (``mine``). methods.md §4."""
