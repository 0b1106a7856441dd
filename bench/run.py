"""graphferry's benchmark suite.

graphferry's loaders (graphferry.dgl.DataLoader and graphferry.pyg.NeighborLoader,
pipelined, and graphferry.sample_neighbors in the main thread, sequential)
against DGL's DataLoader + NeighborSampler (with and without workers), DGL
GraphBolt's CPU pipeline, PyG's NeighborLoader (when its sampling backend is
installed) and a plain torch index_select for features, all in one process
run, with the same seeds, fan-outs and batch size. Per configuration: sampling,
feature-loading and training time per epoch (GraphSAGE, 3 layers, hidden 256),
sampled edges per second, feature bytes moved, ratios baseline / graphferry;
and graphferry's sampling throughput against threads, batch size and fan-out.

  python bench/run.py --quick    real datasets + a small generated graph (make bench)
  python bench/run.py --full     the products-like and papers-like presets (make bench-full)

Writes results.json, results.md and PNG plots into --out (bench/results).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphferry_bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
