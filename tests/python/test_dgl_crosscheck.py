"""Statistical cross-check of uniform node-wise sampling against DGL on PubMed.

One hop of fan-out K from every node, repeated R times with different seeds,
by graphferry.sample_neighbors and by dgl.sampling.sample_neighbors (in-edges,
DGL's default edge_dir="in", matching graphferry). Without replacement edge
u -> v is then taken with probability p_v = min(1, K / deg_in(v)), and a
node's draws in different repetitions are independent.

Tests (all with fixed seeds, so the outcome is deterministic):

* nodes of in-degree <= K: every in-edge is taken in every repetition;
* against the exact p_v: one edge per node (at a random position in its row,
  chosen once), whose inclusion count over R repetitions is Binomial(R, p_v),
  independent across nodes; summed per degree class d the count is a sum of
  independent binomials, giving a z-score per class and a chi-square over the
  classes (df = number of classes);
* graphferry against DGL: the same per-class sums, two-sample z-scores
  (variance 2 * sum R p (1 - p)) and their chi-square;
* per edge (all edges): the dispersion sum_e (c_e - R p_e)^2 / (R p_e (1-p_e))
  over the number of edges, which is 1 in expectation (it catches correlated
  repetitions, e.g. a seed that is not used), and the two-sample version
  sum_e (c_gf - c_dgl)^2 / (2 R p_e (1 - p_e)).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

dgl = pytest.importorskip("dgl")

import testdata  # noqa: E402

import graphferry  # noqa: E402

K = 3
R = 150
# degree classes above K: single degrees, then ranges
CLASS_EDGES = [4, 5, 6, 7, 8, 9, 10, 13, 17, 25, 41, 101, 10**9]


def chi2_sf(x: float, df: int) -> float:
    """Upper tail of the chi-square distribution (Wilson-Hilferty)."""
    h = 2.0 / (9.0 * df)
    z = ((x / df) ** (1.0 / 3.0) - (1.0 - h)) / math.sqrt(h)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


@pytest.fixture(scope="module")
def pubmed():
    path = testdata.dataset_dir("pubmed")  # shipped in tests/data: never skips
    indptr = torch.from_numpy(np.load(path / "indptr.npy")).to(torch.int64)
    indices = torch.from_numpy(np.load(path / "indices.npy")).to(torch.int64)
    return indptr, indices


def test_uniform_sampling_matches_dgl_and_exact(pubmed):
    indptr, indices = pubmed
    n = indptr.numel() - 1
    deg = indptr[1:] - indptr[:-1]
    dst = torch.arange(n).repeat_interleave(deg)
    # edge id = CSC position in both libraries
    gd = dgl.graph((indices, dst), num_nodes=n)
    nodes = torch.arange(n)
    e = indices.numel()

    start = time.perf_counter()
    c_gf = torch.zeros(e, dtype=torch.int64)
    c_dgl = torch.zeros(e, dtype=torch.int64)
    with graphferry.Graph.from_csc(indptr, indices) as g:
        for r in range(R):
            sub = graphferry.sample_neighbors(g, nodes, [K], seed=1000 + r)
            blk = sub.blocks[0]
            assert blk.num_edges == int(deg.clamp(max=K).sum())
            c_gf += torch.bincount(blk.edge_ids, minlength=e)
    t_gf = time.perf_counter() - start
    start = time.perf_counter()
    for r in range(R):
        dgl.seed(5000 + r)
        sg = dgl.sampling.sample_neighbors(gd, nodes, K)
        c_dgl += torch.bincount(sg.edata[dgl.EID], minlength=e)
    t_dgl = time.perf_counter() - start
    assert int(c_gf.max()) <= R and int(c_dgl.max()) <= R, "an edge twice in one sample"

    deg_e = deg[dst].double()  # in-degree of each edge's destination
    p_e = (K / deg_e).clamp(max=1.0)
    print(f"\nPubMed: {n} nodes, {e} edges, fan-out {K}, {R} repetitions (graphferry {t_gf:.1f} s, DGL {t_dgl:.1f} s)")

    # in-degree <= K: every edge every time
    full = deg_e <= K
    assert bool((c_gf[full] == R).all()) and bool((c_dgl[full] == R).all())

    # one edge per node with deg > K, at a random position of its row
    gen = torch.Generator().manual_seed(0)
    big = (deg > K).nonzero().view(-1)
    pos = indptr[big] + (torch.rand(big.numel(), generator=gen) * deg[big]).long()
    p_v = K / deg[big].double()

    print(
        f"{'degrees':>12} {'nodes':>6} {'expected':>10} {'graphferry':>10} {'DGL':>10} "
        f"{'z gf':>6} {'z dgl':>6} {'z gf-dgl':>8}"
    )
    chi_gf = chi_dgl = chi_two = 0.0
    classes = 0
    for lo, hi in zip(CLASS_EDGES[:-1], CLASS_EDGES[1:]):
        sel = (deg[big] >= lo) & (deg[big] < hi)
        if int(sel.sum()) == 0:
            continue
        mean = float((R * p_v[sel]).sum())
        var = float((R * p_v[sel] * (1 - p_v[sel])).sum())
        s_gf = int(c_gf[pos[sel]].sum())
        s_dgl = int(c_dgl[pos[sel]].sum())
        z_gf = (s_gf - mean) / math.sqrt(var)
        z_dgl = (s_dgl - mean) / math.sqrt(var)
        z_two = (s_gf - s_dgl) / math.sqrt(2 * var)
        chi_gf += z_gf**2
        chi_dgl += z_dgl**2
        chi_two += z_two**2
        classes += 1
        label = f"{lo}" if hi == lo + 1 else f"{lo}-{hi - 1 if hi < 10**9 else ''}"
        print(
            f"{label:>12} {int(sel.sum()):>6} {mean:>10.1f} {s_gf:>10} {s_dgl:>10} "
            f"{z_gf:>6.2f} {z_dgl:>6.2f} {z_two:>8.2f}"
        )
        for z in (z_gf, z_dgl, z_two):
            assert abs(z) < 5.0, f"degree class {label}: z = {z:.2f}"
    p_gf, p_dgl, p_two = chi2_sf(chi_gf, classes), chi2_sf(chi_dgl, classes), chi2_sf(chi_two, classes)
    print(
        f"chi-square over {classes} degree classes: graphferry vs exact {chi_gf:.2f} (p = {p_gf:.3f}), "
        f"DGL vs exact {chi_dgl:.2f} (p = {p_dgl:.3f}), graphferry vs DGL {chi_two:.2f} (p = {p_two:.3f})"
    )

    # per-edge dispersion over all edges of nodes with deg > K
    part = ~full
    v1 = R * p_e[part] * (1 - p_e[part])
    m = int(part.sum())
    disp_gf = float(((c_gf[part] - R * p_e[part]) ** 2 / v1).sum()) / m
    disp_dgl = float(((c_dgl[part] - R * p_e[part]) ** 2 / v1).sum()) / m
    disp_two = float(((c_gf[part] - c_dgl[part]).double() ** 2 / (2 * v1)).sum()) / m
    print(
        f"per-edge dispersion over {m} edges (1 expected): graphferry {disp_gf:.3f}, "
        f"DGL {disp_dgl:.3f}, graphferry vs DGL {disp_two:.3f}"
    )

    for p in (p_gf, p_dgl, p_two):
        assert p > 1e-4
    # the counts of a node's edges are correlated (they sum to R * K), so the
    # dispersion is not exactly chi-square; its mean is 1, its spread over
    # ~70k edges a few hundredths
    for d in (disp_gf, disp_dgl, disp_two):
        assert 0.9 < d < 1.1
