"""Heterogeneous GraphSAGE (DGL's HeteroGraphConv of SAGEConv) on a citation heterograph, trained through
graphferry's loader and through DGL's own, with the same seeds, model and training loop.

    python examples/train_hetero.py                     # both loaders, one after the other
    python examples/train_hetero.py --loader graphferry  # graphferry.dgl.DataLoader only
    python examples/train_hetero.py --loader dgl         # dgl.dataloading.DataLoader only

The data is generated here from a seed (``hetero_data``; examples/train_hetero_pyg.py imports it): papers
in classes, authors, institutions and fields of study, with the relations

    paper -cites-> paper, author -writes-> paper, author -affiliated_with-> institution,
    paper -has_topic-> field, and the reverse (rev_*) of each,

papers citing, authors writing and papers having topics mostly within their class, and paper features
only weakly informative, so that the neighbourhood carries most of the signal.
"""

import argparse
import time

import torch

# -- the data (no DGL or PyG needed) -----------------------------------------------------------------------------


def hetero_data(seed=0, num_papers=4000, num_authors=2000, num_institutions=60, num_fields=40, num_classes=5):
    """A seeded random heterograph as plain tensors, for any framework.

    Returns a dict with ``num_nodes`` ({ntype: count}), ``edges`` ({(src, rel, dst): (src ids, dst ids)},
    reverse relations included), ``feat`` ({ntype: float32 [N, width]}, widths differ per type),
    ``label`` (int64 [num_papers]), ``train_idx`` / ``val_idx`` / ``test_idx`` (paper ids) and
    ``num_classes``.
    """
    gen = torch.Generator().manual_seed(seed)
    C = num_classes
    label = torch.randint(0, C, (num_papers,), generator=gen)
    by_class = [torch.nonzero(label == c).view(-1) for c in range(C)]

    def paper_of_class(classes):
        """A random paper of each class in ``classes``."""
        out = torch.empty(len(classes), dtype=torch.int64)
        for c in range(C):
            sel = classes == c
            pool = by_class[c]
            out[sel] = pool[torch.randint(0, len(pool), (int(sel.sum()),), generator=gen)]
        return out

    def homophilous(dst_class, num_sources, source_class, share):
        """For each destination, a source of its class with probability ``share``, else any source."""
        n = len(dst_class)
        same = torch.rand(n, generator=gen) < share
        src = torch.randint(0, num_sources, (n,), generator=gen)
        if same.any():
            src[same] = source_class(dst_class[same])
        return src

    # cites: 5 per paper on average, half within the class
    cited = torch.randint(0, num_papers, (5 * num_papers,), generator=gen)
    citing = homophilous(label[cited], num_papers, paper_of_class, 0.5)
    # writes: every paper has 1-3 authors; authors have a favourite class they write 60% of their papers in
    author_class = torch.randint(0, C, (num_authors,), generator=gen)
    authors_of = [torch.nonzero(author_class == c).view(-1) for c in range(C)]

    def author_of_class(classes):
        out = torch.empty(len(classes), dtype=torch.int64)
        for c in range(C):
            sel = classes == c
            out[sel] = authors_of[c][torch.randint(0, len(authors_of[c]), (int(sel.sum()),), generator=gen)]
        return out

    written = torch.arange(num_papers).repeat_interleave(torch.randint(1, 4, (num_papers,), generator=gen))
    writer = homophilous(label[written], num_authors, author_of_class, 0.6)
    # affiliated_with: one institution per author
    institution = torch.randint(0, num_institutions, (num_authors,), generator=gen)
    # has_topic: one field per paper; field f belongs to class f % C, picked within the class 30% of the time
    field = homophilous(
        label,
        num_fields,
        lambda cls: cls + C * torch.randint(0, num_fields // C, (len(cls),), generator=gen),
        0.3,
    )
    papers = torch.arange(num_papers)
    edges = {
        ("paper", "cites", "paper"): (citing, cited),
        ("author", "writes", "paper"): (writer, written),
        ("author", "affiliated_with", "institution"): (torch.arange(num_authors), institution),
        ("paper", "has_topic", "field"): (papers, field),
    }
    for (s, r, d), (src, dst) in list(edges.items()):
        edges[(d, "rev_" + r, s)] = (dst, src)
    centroids = torch.randn(C, 32, generator=gen)
    feat = {
        "paper": 0.3 * centroids[label] + torch.randn(num_papers, 32, generator=gen),
        "author": torch.randn(num_authors, 16, generator=gen),
        "institution": torch.randn(num_institutions, 8, generator=gen),
        "field": torch.randn(num_fields, 8, generator=gen),
    }
    perm = torch.randperm(num_papers, generator=gen)
    n_train, n_val = num_papers * 6 // 10, num_papers * 2 // 10
    return {
        "num_nodes": {"paper": num_papers, "author": num_authors, "institution": num_institutions, "field": num_fields},
        "edges": edges,
        "feat": feat,
        "label": label,
        "train_idx": perm[:n_train].sort().values,
        "val_idx": perm[n_train : n_train + n_val].sort().values,
        "test_idx": perm[n_train + n_val :].sort().values,
        "num_classes": C,
    }


def to_dgl(data):
    """The data as a DGL heterograph with ``feat`` on every node type and ``label`` on papers."""
    import dgl

    g = dgl.heterograph(data["edges"], num_nodes_dict=data["num_nodes"])
    for ntype, x in data["feat"].items():
        g.nodes[ntype].data["feat"] = x
    g.nodes["paper"].data["label"] = data["label"]
    return g


# -- the model and the training loop ---------------------------------------------------------------------------------


def make_model(g, in_feats, hidden, n_classes, dropout):
    import dgl.nn as dglnn
    import torch.nn as nn
    import torch.nn.functional as F

    class HeteroSAGE(nn.Module):
        """A per-type input projection, then one HeteroGraphConv of SAGEConv (one per relation, summed) per
        block."""

        def __init__(self):
            super().__init__()
            self.proj = nn.ModuleDict({nt: nn.Linear(w, hidden) for nt, w in in_feats.items()})
            self.layers = nn.ModuleList(
                [
                    dglnn.HeteroGraphConv(
                        {et: dglnn.SAGEConv(hidden, out, "mean") for et in g.canonical_etypes}, aggregate="sum"
                    )
                    for out in (hidden, n_classes)
                ]
            )
            self.dropout = nn.Dropout(dropout)

        def forward(self, blocks, x):
            h = {nt: self.dropout(self.proj[nt](v)) for nt, v in x.items() if v.shape[0]}
            for i, (layer, block) in enumerate(zip(self.layers, blocks)):
                h = layer(block, h)
                if i != len(self.layers) - 1:
                    h = {nt: self.dropout(F.relu(v)) for nt, v in h.items()}
            return h["paper"]

    return HeteroSAGE()


def run(loader_name, g, data, args):
    """Trains from scratch with one loader; returns the test accuracy of the best validation epoch."""
    import dgl
    import torch.nn.functional as F

    import graphferry.dgl

    torch.manual_seed(args.seed)
    dgl.seed(args.seed)
    fanouts = [{et: k for et in g.canonical_etypes} for k in args.fanouts]
    sampler = dgl.dataloading.NeighborSampler(
        fanouts, prefetch_node_feats={nt: ["feat"] for nt in g.ntypes}, prefetch_labels={"paper": ["label"]}
    )
    DataLoader = graphferry.dgl.DataLoader if loader_name == "graphferry" else dgl.dataloading.DataLoader
    extra = {"seed": args.seed} if loader_name == "graphferry" else {}
    train = DataLoader(g, {"paper": data["train_idx"]}, sampler, batch_size=args.batch_size, shuffle=True, **extra)
    val = DataLoader(g, {"paper": data["val_idx"]}, sampler, batch_size=1024, **extra)
    test = DataLoader(g, {"paper": data["test_idx"]}, sampler, batch_size=1024, **extra)
    in_feats = {nt: x.shape[1] for nt, x in data["feat"].items()}
    model = make_model(g, in_feats, args.hidden, data["num_classes"], args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    def features(blocks):
        return {nt: blocks[0].srcnodes[nt].data["feat"] for nt in blocks[0].srctypes}

    def evaluate(loader):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for _, output_nodes, blocks in loader:
                pred = model(blocks, features(blocks)).argmax(1)
                correct += (pred == blocks[-1].dstnodes["paper"].data["label"]).sum().item()
                total += len(output_nodes["paper"])
        return correct / total

    best_val, best_test = -1.0, 0.0
    for epoch in range(args.epochs):
        model.train()
        start, total_loss, batches = time.perf_counter(), 0.0, 0
        for _, _, blocks in train:
            logits = model(blocks, features(blocks))
            loss = F.cross_entropy(logits, blocks[-1].dstnodes["paper"].data["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
            batches += 1
        epoch_time = time.perf_counter() - start
        val_acc, test_acc = evaluate(val), evaluate(test)
        if val_acc > best_val:
            best_val, best_test = val_acc, test_acc
        print(
            f"[{loader_name}] epoch {epoch:2d} | time {epoch_time:.2f}s | loss {total_loss / batches:.4f} "
            f"| val {100 * val_acc:.2f}% | test {100 * test_acc:.2f}%"
        )
    return best_test


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", default="both", choices=["both", "graphferry", "dgl"])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10], help="per relation, input layer first")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--papers", type=int, default=4000, help="number of papers (the graph scales with it)")
    args = parser.parse_args()

    data = hetero_data(
        seed=args.seed, num_papers=args.papers, num_authors=args.papers // 2, num_institutions=60, num_fields=40
    )
    g = to_dgl(data)
    print(g)
    results = {}
    for name in ("graphferry", "dgl") if args.loader == "both" else (args.loader,):
        results[name] = run(name, g, data, args)
    for name, acc in results.items():
        print(f"{name}: test accuracy {100 * acc:.2f}% (at the best validation epoch)")


if __name__ == "__main__":
    main()
