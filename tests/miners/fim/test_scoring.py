"""Ĥ, Î, score, penalty and selection pinned on hand-written files; expected values worked out by hand."""
import dataclasses
import math

import pytest

from swemine.miners.fim.graph import build_graph
from swemine.miners.fim.groups import _FileGroups, select_groups
from swemine.miners.fim.mine import mixture_fractions
from swemine.miners.fim.parse import FileParser
from swemine.miners.fim.scoring import FimConfig, penalty, score_node, select_singles

SHAPES = '''import math


def area(shape, scale=1.0):
    """Area of a shape."""
    if shape.kind == "circle":
        return math.pi * shape.r ** 2 * scale
    elif shape.kind == "square":
        return shape.side ** 2 * scale
    for part in shape.parts:
        if part and scale:
            scale += 1
    return 0.0


def report(shapes):
    total = 0
    for s in shapes:
        total += area(s, 2.0)
    return total + area(shapes[0], scale=3)


def helper(x):
    return x.grow(1)


class Box:
    def __init__(self, w):
        self.w = w

    def grow(self, n: int) -> int:
        self.w += n
        return self.w

    def shrink(self, n):
        self.w -= n
        self.grow(0)
'''

CSV = '''def parse_row(line, sep=","):
    """Split one CSV line."""
    parts = line.split(sep)
    out = []
    for p in parts:
        p = p.strip()
        if p:
            out.append(p)
        else:
            out.append(None)
    return out


def load(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            rows.append(parse_row(line, sep=";"))
    total = len(rows)
    if total == 0:
        return None
    return rows
'''

# the hand-written files are short: lift the 50-line file bound, keep every other released default
CFG = FimConfig(min_file_lines=1)


@pytest.fixture(scope="module")
def parser():
    return FileParser()


def _graph(parser, path, src):
    fs = parser({"path": path, "content": src, "repo": "t/t", "commit": ""})
    return fs, build_graph([fs])


def test_area_complexity_inferability_score(parser):
    fs, rg = _graph(parser, "shapes.py", SHAPES)
    area = next(f for f in fs.functions if f.name == "area")
    # def on line 4, last code line 13 -> LoC 10
    assert (area.start_line, area.end_line, area.loc) == (4, 13, 10)
    # CC = 1 + if + elif + for + inner if + one `and` = 6; depth: if > elif (2), for > if (2) -> 2
    assert (area.cc, area.depth) == (6, 2)
    s = score_node(rg, "shapes.py::area", CFG)
    # Ĥ = 0.4*min(10/50,2) + 0.4*min(6/10,2) + 0.2*min(2/5,2) = 0.08 + 0.24 + 0.08
    assert s.complexity == pytest.approx(0.40)
    # callers: report calls area(s, 2.0) -> 0.5 + 0.05 (name) + 0.15 (literal) + 0.10 = 0.80
    #                     area(shapes[0], scale=3) -> 0.5 + 0.08 (other) + 0.12 (keyword) + 0.10 = 0.80
    # sum 1.60 capped at 1.5 -> caller = min(1.5/3, 1) = 0.5
    # callees 0; signature = 0 + 0 + min(1 part/5, 0.25)=0.2 + min(2 params/6, 0.20)=0.2 -> 0.4; doc 0.5; class 0
    assert s.parts == pytest.approx({"caller": 0.5, "callee": 0.0, "signature": 0.4, "doc": 0.5, "class": 0.0})
    # Î = 0.30*0.5 + 0.25*0 + 0.20*0.4 + 0.10*0.5 + 0.15*0 = 0.15 + 0.08 + 0.05
    assert s.inferability == pytest.approx(0.28)
    # score = 0.4*0.28/(0.4+0.28) = 0.112/0.68; Δ = (0.4-0.28)/0.4 = 0.3 <= 0.5 -> ρ = 1
    assert s.score == pytest.approx(0.112 / 0.68)
    assert (s.difficulty, s.penalty) == (pytest.approx(0.3), 1.0)
    assert s.fim_score == pytest.approx(0.164705882)


def test_method_class_and_fuzzy_callers(parser):
    fs, rg = _graph(parser, "shapes.py", SHAPES)
    assert sorted(rg.edges["call"]) == [("shapes.py::Box.shrink", "shapes.py::Box.grow"),  # self.grow -> Box.grow
                                        ("shapes.py::helper", "shapes.py::Box.grow"),      # x.grow fuzzy by name
                                        ("shapes.py::report", "shapes.py::area")]
    assert sorted(rg.siblings("shapes.py::Box.grow")) == ["shapes.py::Box.__init__", "shapes.py::Box.shrink"]
    g = rg.graph                                     # networkx view: 3 calls + 3*2 sibling pairs, one shared
    assert g.number_of_edges() == 8
    assert g["shapes.py::Box.shrink"]["shapes.py::Box.grow"] == {"call": True, "sibling": True}
    s = score_node(rg, "shapes.py::Box.grow", CFG)
    # callers: helper x.grow(1) = 0.5+0.15+0.10 = 0.75; shrink self.grow(0) = 0.75 -> 1.5/3 = 0.5
    # signature: return type 0.30 + param types 0.25 + min(1/5,0.25)=0.2 + min(1/6,0.2)=0.1667 = 0.9167
    # class: 2 siblings / 5 = 0.4, + 0.3 because Box defines __init__ -> 0.7
    assert s.parts == pytest.approx({"caller": 0.5, "callee": 0.0, "signature": 0.30 + 0.25 + 0.2 + 1 / 6,
                                     "doc": 0.0, "class": 0.7})
    # Î = 0.30*0.5 + 0.20*0.916667 + 0.15*0.7 = 0.15 + 0.183333 + 0.105
    assert s.inferability == pytest.approx(0.438333, abs=1e-6)
    # Ĥ = 0.4*3/50 + 0.4*1/10 + 0 = 0.024 + 0.04
    assert s.complexity == pytest.approx(0.064)


def test_selected_singles_and_skip_reasons(parser):
    fs, rg = _graph(parser, "shapes.py", SHAPES)
    chosen, skipped = select_singles(rg, fs, CFG)
    assert [c.nid for c in chosen] == ["shapes.py::area"]
    # report/helper/grow/shrink are under 10 LoC; __init__ is a skipped dunder
    assert skipped == {"loc_too_small": 4, "dunder": 1}
    chosen, skipped = select_singles(rg, fs, FimConfig())       # released config: same picks per function
    assert [c.nid for c in chosen] == ["shapes.py::area"]


def test_penalty_one_sided_gaussian():
    cfg = FimConfig()
    assert penalty(0.5, cfg) == 1.0
    # Δ = 0.7: exp(-(0.2)^2 / (2*0.2^2)) = exp(-0.5)
    assert penalty(0.7, cfg) == pytest.approx(math.exp(-0.5))


def test_csv_pair_singles_and_group_score(parser):
    fs, rg = _graph(parser, "csvio.py", CSV)
    row, load = fs.functions
    # parse_row: LoC 11, CC 1+for+if = 3, depth for>if = 2; load: LoC 11, CC 1+for+if+if = 4, depth with>for>if = 3
    assert (row.loc, row.cc, row.depth, load.loc, load.cc, load.depth) == (11, 3, 2, 11, 4, 3)
    sr, sl = score_node(rg, "csvio.py::parse_row", CFG), score_node(rg, "csvio.py::load", CFG)
    # Ĥ(parse_row) = 0.4*0.22 + 0.4*0.3 + 0.2*0.4 = 0.088 + 0.12 + 0.08 = 0.288
    # Î(parse_row): caller load: parse_row(line, sep=";") = 0.5+0.05+0.12+0.10 = 0.77 -> 0.77/3
    #   signature min(2/5,0.25)=0.25 + min(2/6,0.2)=0.2 = 0.45; doc 0.5
    #   Î = 0.30*0.256667 + 0.20*0.45 + 0.10*0.5 = 0.077 + 0.09 + 0.05 = 0.217
    assert (sr.complexity, sr.inferability) == (pytest.approx(0.288), pytest.approx(0.217))
    assert sr.fim_score == pytest.approx(0.288 * 0.217 / 0.505)                  # Δ = 0.2465 -> ρ = 1
    # Ĥ(load) = 0.088 + 0.16 + 0.12 = 0.368; Î(load) = 0.25*(1/4) + 0.20*(0.2 + 1/6) = 0.0625 + 0.073333
    assert (sl.complexity, sl.inferability) == (pytest.approx(0.368), pytest.approx(0.1358333, abs=1e-6))
    # Δ = (0.368-0.135833)/0.368 = 0.630888 -> ρ = exp(-(0.130888)^2/0.08) = 0.807231
    assert sl.penalty == pytest.approx(0.807231, abs=1e-6)
    assert sl.fim_score == pytest.approx(0.368 * 0.1358333 / 0.5038333 * 0.807231, abs=1e-6)   # 0.080088
    chosen, _ = select_singles(rg, fs, CFG)
    assert [c.nid for c in chosen] == ["csvio.py::parse_row", "csvio.py::load"]

    # the pair (caller_callee): intra-group information removed, doc = 0
    fg = _FileGroups(rg, fs, dataclasses.replace(CFG, min_fim_score=0.0, max_pair_loc_frac=1.0))
    g = fg.score(frozenset(["csvio.py::load", "csvio.py::parse_row"]), "caller_callee")
    # parse_row: caller 0 (load is in the group), sig 0.45 -> Î = 0.09; load: callee 0 -> Î = 0.2*0.366667 = 0.073333
    assert [m.inferability for m in g.member_scores] == [pytest.approx(0.09), pytest.approx(0.0733333, abs=1e-6)]
    # Ĝ = (0.288+0.368)/2 = 0.328; Î_g = 0.0816667; coupling = 0.5 (call) + 0 (sibling) + 0 (no self state)
    assert (g.scored.complexity, g.coupling) == (pytest.approx(0.328), pytest.approx(0.5))
    # hs = 0.328*0.0816667/0.4096667 = 0.065386; Δ = 0.751016 -> ρ = 0.454929; 0.5 * hs * ρ = 0.014873
    assert g.scored.fim_score == pytest.approx(0.014873, abs=1e-6)
    pairs, triples, skipped = select_groups(rg, fs, CFG)
    assert (pairs, triples) == ([], [])
    assert skipped == {"group_masked_loc_over_cap": 1}     # 22 masked lines > 30% of a 24-line file


def test_mixture_fractions():
    # budget = min(100/0.8, 10/0.15, 10/0.05) = 66.67 -> keep 53.33 singles, 10 pairs, 3.33 triples
    f = mixture_fractions({1: 100, 2: 10, 3: 10}, (0.8, 0.15, 0.05))
    assert f == {1: pytest.approx(0.53333, abs=1e-4), 2: pytest.approx(1.0), 3: pytest.approx(1 / 3)}
    # no triples: ratio renormalised over singles and pairs (0.8/0.95, 0.15/0.95)
    f = mixture_fractions({1: 100, 2: 10, 3: 0}, (0.8, 0.15, 0.05))
    assert f == {1: pytest.approx(0.53333, abs=1e-4), 2: pytest.approx(1.0), 3: 0.0}
    assert mixture_fractions({1: 5, 2: 1, 3: 0}, ()) == {1: 1.0, 2: 1.0, 3: 1.0}
