"""graphferry's benchmark suite: graphferry's loaders against DGL, GraphBolt,
PyG and plain PyTorch, measured in one process run (see bench/run.py)."""
