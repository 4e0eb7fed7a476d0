"""
The papers' equations written literally, one unpadded example at a time, vector by vector: the references the fast
paths (`memplugins.modules.fast`) are tested against, and what `benchmarks/` times them against. Slow by design:
nothing here is batched, fused or reordered, so a reader can check each line against the paper's equation.
"""
