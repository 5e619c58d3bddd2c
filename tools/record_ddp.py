"""Record the two ranks' traces of examples/test_05_ddp.py's step for tests/data (needs 2 GPUs).

python -m tools.record_ddp OUTDIR    (from the repository root)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from examples.test_05_ddp import ddp_step
from pytest_kernelprof import profile_ranks

if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["DDP_EXAMPLE_OUT"] = str(out)
    for rank, prof in enumerate(profile_ranks(ddp_step, 2, trace_dir=out)):
        print(
            f"rank {rank}: {len(prof.kernels)} kernels, "
            f"{prof.kernels.count(kind='communication')} NCCL, {prof.overlap()}"
        )
        print(prof.table())
