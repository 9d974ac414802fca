#!/usr/bin/env bash
# Overlap, shown (docs/scale.md): how much of a streamed pass's communication the simulated
# cluster leaves exposed. For each ResNet-50 3x3 layer at batch 256 and each panel count, one
# layer (three passes) runs under smpirun twice on the planner's grid:
#   --compute model  kernels skipped, their modelled flops injected: time T, compute C;
#   --compute comm   kernels skipped, nothing injected: the communication alone, M.
# The exposed share of the communication is (T - C) / M: 1 when nothing hides, 0 when all of it
# does. Panels 0 is the grid algorithm (gathers, then the kernel, then the reduce-scatter).
#
# Usage: bash bench/overlap.sh [OUT_DIR]   (default docs/results/overlap)
#   OVERLAP_PROCS      ranks (default 64)
#   OVERLAP_PLATFORMS  platforms (default "ib100-cpu nvlink-gpu")
#   OVERLAP_PANELS     panel counts (default "0 4 8 16")
#   CONVGRID_SMPI_BUILD_DIR  the SMPI build to run (default build-smpi)
# Writes OUT_DIR/overlap.csv and OUT_DIR/overlap.md (the table).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/overlap}
procs=${OVERLAP_PROCS:-64}
platforms=${OVERLAP_PLATFORMS:-ib100-cpu nvlink-gpu}
panel_counts=${OVERLAP_PANELS:-0 4 8 16}
# ResNet-50's 3x3 convolutions, one per stage (conv2_x to conv5_x), at batch 256.
layers=(res2a_branch2b:N=256,C=64,H=56,W=56,K=64,R=3,S=3,pad=1
        res3b_branch2b:N=256,C=128,H=28,W=28,K=128,R=3,S=3,pad=1
        res4b_branch2b:N=256,C=256,H=14,W=14,K=256,R=3,S=3,pad=1
        res5b_branch2b:N=256,C=512,H=7,W=7,K=512,R=3,S=3,pad=1)
mkdir -p "$out"
bash scripts/setup.sh
bash scripts/build_smpi.sh convgrid_cli > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "platform,procs,layer,grid,panels,pass,time_s,compute_s,comm_alone_s,exposed" > "$out/overlap.csv"
for platform in $platforms; do
  for entry in "${layers[@]}"; do
    name=${entry%%:*} shape=${entry#*:}
    for panels in $panel_counts; do
      echo "== $platform P=$procs $name panels=$panels"
      for mode in model comm; do
        bash scripts/smpirun.sh --platform "$platform" --np "$procs" "${CONVGRID_SMPI_BUILD_DIR:-build-smpi}/convgrid" conv --shape "$shape" \
          --panels "$panels" --compute "$mode" --repeat 1 --json "$work/$mode.json" > "$work/$mode.txt" 2>&1 ||
          { cat "$work/$mode.txt"; exit 1; }
      done
      /usr/bin/python3 - "$work" "$platform" "$procs" "$name" "$panels" >> "$out/overlap.csv" <<'PY'
import json, sys
work, platform, procs, name, panels = sys.argv[1:]
run, alone = (json.load(open(f"{work}/{m}.json")) for m in ("model", "comm"))
grid = "x".join(str(g) for g in run["grid"])
total = [0.0, 0.0, 0.0]
for p in ("forward", "backward_data", "backward_weights"):
    t, c = run["passes"][p]["max"]["median_s"], run["passes"][p]["max"]["compute_s"]
    m = alone["passes"][p]["max"]["median_s"]
    total = [total[0] + t, total[1] + c, total[2] + m]
    print(f"{platform},{procs},{name},{grid},{panels},{p},{t:.9g},{c:.9g},{m:.9g},{(t - c) / m if m > 0 else 0:.4f}")
t, c, m = total
print(f"{platform},{procs},{name},{grid},{panels},layer,{t:.9g},{c:.9g},{m:.9g},{(t - c) / m if m > 0 else 0:.4f}")
PY
      tail -1 "$out/overlap.csv"
    done
  done
done

/usr/bin/python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/overlap.csv")))
lines = ["| platform | layer | grid | panels | layer ms | compute ms | communication alone ms | exposed | forward | backward-data | backward-weights |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    if r["pass"] != "layer":
        continue
    key = (r["platform"], r["layer"], r["panels"])
    per = {q["pass"]: q["exposed"] for q in rows if (q["platform"], q["layer"], q["panels"]) == key}
    lines.append(f"| {r['platform']} | {r['layer']} | {r['grid']} | {r['panels']} | {float(r['time_s']) * 1e3:.3f} | "
                 f"{float(r['compute_s']) * 1e3:.3f} | {float(r['comm_alone_s']) * 1e3:.3f} | {float(r['exposed']):.2f} | "
                 f"{float(per['forward']):.2f} | {float(per['backward_data']):.2f} | {float(per['backward_weights']):.2f} |")
open(f"{out}/overlap.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
