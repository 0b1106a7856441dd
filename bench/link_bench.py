"""graphferry's link-prediction benchmark: graphferry's DGL and PyG edge
loaders beside DGL's own edge loader on CiteSeer's and products-like's edges,
a sampling epoch and a sampling + feature epoch, in one process run
(bench/graphferry_bench/link.py says what is measured).

    python bench/link_bench.py [--datasets citeseer,gen:products-like] [--epochs 7] [--out bench/results/link]

Writes results.json and results.md into --out (make bench-link).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphferry_bench.link import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
