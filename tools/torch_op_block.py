"""The exported sdpa_fwd op inside a small model block, as a model calls attention (tools/torch_op_check.py).

A block of a grouped-query transformer layer: q, k and v projections (nn.Linear, no bias) of x [B, S, H * D] to H
query heads and Hkv K/V heads, attention, and the output projection. The same block (same weights) is built
around kforge's op and around F.scaled_dot_product_attention (enable_gqa, torch's own backend choice), both
checked against the block in fp64 (torch's math attention on repeated K/V heads), the kforge block also under
torch.compile(fullgraph=True), and both compiled blocks timed side by side (CUDA-graph replay, interleaved).
Prefill shapes only (S == Skv): a block with a KV cache would read K and V from it.
"""
import compare_torch as ct
import kfexport as kx


class Block:
    """Builds the torch.nn.Module lazily (torch is imported by the caller first)."""

    @staticmethod
    def make(shape, attend, dtype, seed=2):
        import torch

        H, Hkv, D = shape["H"], shape["Hkv"], shape["D"]
        d_model = H * D
        torch.manual_seed(seed)

        class AttentionBlock(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.q = torch.nn.Linear(d_model, H * D, bias=False)
                self.k = torch.nn.Linear(d_model, Hkv * D, bias=False)
                self.v = torch.nn.Linear(d_model, Hkv * D, bias=False)
                self.o = torch.nn.Linear(H * D, d_model, bias=False)

            def forward(self, x):
                B, S, _ = x.shape
                q = self.q(x).view(B, S, H, D).transpose(1, 2).contiguous()
                k = self.k(x).view(B, S, Hkv, D).transpose(1, 2).contiguous()
                v = self.v(x).view(B, S, Hkv, D).transpose(1, 2).contiguous()
                return self.o(attend(q, k, v).transpose(1, 2).reshape(B, S, H * D))

        return AttentionBlock().to(device="cuda", dtype=dtype)


def check_model_block(c, op, shape, tol):
    """Adds the block's checks to c (tools/torch_op_check.py's Checks) and prints the timing table."""
    import torch
    import torch.nn.functional as F

    if shape["S"] != shape["Skv"]:
        print("  (model block: prefill shapes only, S == Skv; skipped)")
        return
    causal = bool(shape["causal"])
    dtype = kx.torch_dtype(shape["dtype"])
    kforge_block = Block.make(shape, lambda q, k, v: op(q, k, v, causal), dtype)
    torch_block = Block.make(shape, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **ct.sdpa_args(q, k, causal)),
                             dtype)
    ref_block = Block.make(shape, lambda q, k, v: ct.reference_fp64(q, k, v, causal), torch.float64)
    # one set of weights, as the blocks hold them (the fp64 block: the same values, upcast)
    weights = kforge_block.state_dict()
    torch_block.load_state_dict(weights)
    ref_block.load_state_dict({k: w.double() for k, w in weights.items()})
    g = torch.Generator(device="cuda").manual_seed(3)
    x = (torch.rand(shape["B"], shape["S"], shape["H"] * shape["D"], device="cuda", generator=g) * 2 - 1).to(dtype)
    with torch.no_grad():
        ref = ref_block(x.double())
        c.within("model block (q/k/v projections, kforge attention, output projection) vs the block in fp64",
                 kforge_block(x), ref, tol)
        c.within("the same block on F.scaled_dot_product_attention vs fp64 (for comparison)", torch_block(x), ref,
                 tol)
        compiled = {}
        for name, block in (("kforge block", kforge_block), ("sdpa block", torch_block)):
            try:
                compiled[name] = torch.compile(block, fullgraph=True)
                compiled[name](x)
            except Exception as e:  # no triton for inductor: compile the graph without it
                print(f"  note: inductor failed for the {name} ({str(e).splitlines()[0][:100]}); using aot_eager")
                compiled[name] = torch.compile(block, fullgraph=True, backend="aot_eager")
        torch.cuda.synchronize()
        c.within("the kforge block under torch.compile(fullgraph=True) vs fp64", compiled["kforge block"](x), ref, tol)
        try:
            res = kx.time_graphs({name: (lambda f=f: f(x)) for name, f in compiled.items()})
        except Exception as e:  # a compiled block that cannot be captured in a CUDA graph: no table, no failure
            print(f"  note: the compiled blocks could not be timed by graph replay ({str(e).splitlines()[0][:120]})")
            return
    base = res["kforge block"]["median_us"]
    print(f"\n{'compiled block':16s} {'median us':>10s} {'p10':>8s} {'p90':>8s} {'vs kforge':>9s}")
    for name, r in res.items():
        print(f"{name:16s} {r['median_us']:10.2f} {r['p10_us']:8.2f} {r['p90_us']:8.2f} {r['median_us'] / base:9.2f}")
    print("(the whole block: projections and attention; CUDA-graph replay, interleaved)")
