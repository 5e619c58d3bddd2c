import json, torch, sys
from torch import nn
from torch.profiler import profile, ProfilerActivity, record_function
ev0 = None
lin = nn.Linear(32, 64, device="cuda", dtype=torch.bfloat16)
x = torch.randn(1024, 32, device="cuda", dtype=torch.bfloat16)
lin(x); torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    for i in range(2):
        with record_function(f"ProfilerStep#{i}"):
            with record_function("userrange"):
                lin(x)
        torch.cuda.synchronize()
evs = p.profiler.kineto_results.events()
print([m for m in dir(evs[0]) if not m.startswith("_")])
rows = []
for ev in evs:
    row = {}
    for attr in [m for m in dir(ev) if not m.startswith("_")]:
        try:
            v = getattr(ev, attr)
            row[attr] = str(v() if callable(v) else v)[:300]
        except Exception as exc:
            row[attr] = f"<{type(exc).__name__}: {exc}>"[:200]
    rows.append(row)
for r in rows:
    print({k: r.get(k) for k in ("name","device_type","correlation_id","linked_correlation_id","external_id","is_user_annotation","device_resource_id","start_thread_id","is_async","device_index")}, r.get("metadata_json","")[:150] if "Profiler" not in r["name"] else "")
p.export_chrome_trace(sys.argv[1])
