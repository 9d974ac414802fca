#!/usr/bin/env bash
# Does `--objective time` pick a grid whose simulated time is within 5% of the fastest of its top
# candidates (docs/scale.md)? For each ResNet-50 layer below at batch 256 and each platform, the
# planner lists its 3 best grids by modelled time (`convgrid plan --objective time --top 3`), and
# each grid runs one training step of the layer under smpirun in model mode (`convgrid conv
# --grid G --compute model`: the three passes, operands held between them as the model assumes).
# A pass's simulated time is the slowest rank's from the common start (every rank at one simulated
# instant, sim::start_together) to its end (`own_s`), as `convgrid step` times it.
#
# Usage: bash bench/objective_time.sh [OUT_DIR]   (default docs/results/objective-time)
#   OBJECTIVE_PROCS      ranks (default 64)
#   OBJECTIVE_PLATFORMS  platforms (default "ib100-cpu nvlink-gpu")
#   CONVGRID_SMPI_BUILD_DIR  the SMPI build to run (default build-smpi)
# Writes OUT_DIR/objective_time.csv and OUT_DIR/objective_time.md (the table).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/objective-time}
procs=${OBJECTIVE_PROCS:-64}
platforms=${OBJECTIVE_PLATFORMS:-ib100-cpu nvlink-gpu}
layers=(conv1:N=256,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3
        res2a_branch2b:N=256,C=64,H=56,W=56,K=64,R=3,S=3,pad=1
        res3b_branch2b:N=256,C=128,H=28,W=28,K=128,R=3,S=3,pad=1
        res4b_branch2a:N=256,C=1024,H=14,W=14,K=256,R=1,S=1
        res4b_branch2b:N=256,C=256,H=14,W=14,K=256,R=3,S=3,pad=1
        res5b_branch2b:N=256,C=512,H=7,W=7,K=512,R=3,S=3,pad=1)
mkdir -p "$out"
bash scripts/setup.sh
bash scripts/build.sh convgrid_cli > /dev/null
bash scripts/build_smpi.sh convgrid_cli > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "platform,procs,layer,rank,grid,modelled_s,simulated_s" > "$out/objective_time.csv"
for platform in $platforms; do
  for entry in "${layers[@]}"; do
    name=${entry%%:*} shape=${entry#*:}
    build/convgrid plan --shape "$shape" --procs "$procs" --passes train --objective time --profile "$platform" \
      --top 3 --json "$work/plan.json" > /dev/null
    mapfile -t grids < <(/usr/bin/python3 -c 'import json,sys
for t in json.load(open(sys.argv[1]))["top"]: print(",".join(map(str, t["grid"])), t["time_s"])' "$work/plan.json")
    rank=0
    for g in "${grids[@]}"; do
      rank=$((rank + 1))
      grid=${g% *} modelled=${g#* }
      bash scripts/smpirun.sh --platform "$platform" --np "$procs" "${CONVGRID_SMPI_BUILD_DIR:-build-smpi}/convgrid" conv --shape "$shape" \
        --grid "$grid" --compute model --repeat 1 --json "$work/run.json" > "$work/run.txt" 2>&1 ||
        { cat "$work/run.txt"; exit 1; }
      simulated=$(/usr/bin/python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
print(sum(p["max"]["own_s"] for p in j["passes"].values()))' "$work/run.json")
      echo "$platform,$procs,$name,$rank,${grid//,/x},$modelled,$simulated" | tee -a "$out/objective_time.csv"
    done
  done
done

/usr/bin/python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/objective_time.csv")))
lines = ["| platform | P | layer | planner's grid (1st) | simulated ms | modelled ms | fastest of the top 3, simulated | 1st / fastest |",
         "|---|---|---|---|---|---|---|---|"]
keys = []
for r in rows:
    if (r["platform"], r["procs"], r["layer"]) not in keys:
        keys.append((r["platform"], r["procs"], r["layer"]))
worst = 0.0
for key in keys:
    group = [r for r in rows if (r["platform"], r["procs"], r["layer"]) == key]
    platform, layer = key[0], key[2]
    first = next(r for r in group if r["rank"] == "1")
    fastest = min(group, key=lambda r: float(r["simulated_s"]))
    ratio = float(first["simulated_s"]) / float(fastest["simulated_s"])
    worst = max(worst, ratio)
    lines.append(f"| {platform} | {first['procs']} | {layer} | {first['grid']} | {float(first['simulated_s']) * 1e3:.3f} | "
                 f"{float(first['modelled_s']) * 1e3:.3f} | {fastest['grid']}: {float(fastest['simulated_s']) * 1e3:.3f} ms | {ratio:.3f} |")
lines.append("")
lines.append(f"Largest 1st / fastest: {worst:.3f} (target: at most 1.05).")
open(f"{out}/objective_time.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
