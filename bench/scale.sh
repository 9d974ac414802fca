#!/usr/bin/env bash
# The scaling study of docs/scale.md: simulated time of a ResNet-50 training step (every conv and
# fc layer's three passes and the redistributions between them, `convgrid step`) at batch 256, on
# the simulated clusters of platforms/, for the planner's plan, data parallelism and the best batch
# x spatial hybrid, in model mode (kernels skipped, their modelled flops injected). Every run also
# checks that every rank's words equal the model.
#
# Usage: bash bench/scale.sh [OUT_DIR]   (default docs/results/scale)
#   SCALE_PROCS      rank counts (default "64 256"; with 1024 and the four plans the study is about
#                    23 minutes here, 1024 taking 4-8 minutes and 2.3-4.5 GB a run; one run at
#                    4096 takes the better part of an hour, docs/scale.md)
#   SCALE_PLATFORMS  platforms (default "ib100-cpu nvlink-gpu")
#   SCALE_PLANS      plans (default "planner data hybrid"; "time" is the planner with --objective time,
#                    fewest modelled seconds instead of fewest words)
#   SCALE_LIMIT_S    wall-clock limit of one run, seconds (default 1800); a run past it is recorded
#                    as not finished, with the layers it got through
#   SCALE_JOBS       platforms simulated side by side (default 2: one per core; each simulation is
#                    one thread), their lines of progress prefixed with the platform
#   CONVGRID_SMPI_BUILD_DIR  the SMPI build to run (default build-smpi; scripts/build_smpi.sh)
# Memory is the peak proportional set size of the simulation (bench/peak_pss.sh), sampled every
# 5 s: its maximum RSS would count each folded buffer once per mapping.
# Writes OUT_DIR/<platform>-<plan>-<P>.{txt,json}, OUT_DIR/scale.csv, OUT_DIR/scale.md (the tables,
# bench/scale_report.py) and OUT_DIR/time.svg.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/scale}
procs=${SCALE_PROCS:-64 256}
platforms=${SCALE_PLATFORMS:-ib100-cpu nvlink-gpu}
plans=${SCALE_PLANS:-planner data hybrid}
limit=${SCALE_LIMIT_S:-1800}
jobs=${SCALE_JOBS:-2}
mkdir -p "$out"
bash scripts/setup.sh
smpi_build=${CONVGRID_SMPI_BUILD_DIR:-build-smpi}
bash scripts/build_smpi.sh convgrid_cli > /dev/null
bash scripts/build.sh convgrid_cli > /dev/null  # build/convgrid plan: the current model, for the report

header="platform,plan,procs,finished,words_equal_model,step_s,model_step_s,step_words,wall_s,peak_pss_kb"
# The flags of convgrid plan and step that choose a plan's grids.
plan_flags() { if [[ $1 == time ]]; then echo "--plan planner --objective time"; else echo "--plan $1"; fi; }
# Every plan and P on one platform, in order; its rows of scale.csv go to $out/.scale-<platform>.csv.
run_platform() {
  local platform=$1 profile=$1  # each platform matches the machine profile of the same name
  local csv=$out/.scale-$platform.csv tmp=$out/.plan-$platform
  local plan p name grids same earlier start status wall rss layers
  declare -A ran  # plan-P -> its grids and panels, layer by layer
  : > "$csv"
  for plan in $plans; do
    for p in $procs; do
      name="$platform-$plan-$p"
      echo "== $name"
      rm -f "$out/$name.json"
      # A plan whose grids and panels equal those of a plan already run here (the best hybrid is
      # data parallelism itself while P <= N) is not simulated again: the run would be the same.
      # A plan the planner refuses (data parallelism at P > N = 256) is skipped with its reason.
      if ! build/convgrid plan --network resnet50 --batch 256 --procs "$p" --passes train --profile "$profile" \
        $(plan_flags "$plan") --json "$tmp.json" > /dev/null 2> "$tmp.err"; then
        echo "   no plan: $(< "$tmp.err")"
        rm -f "$tmp.err"
        continue
      fi
      rm -f "$tmp.err"
      grids=$(/usr/bin/python3 -c 'import json,sys
print(";".join(",".join(map(str, l["grid"])) + "/" + str(l["panels"]) for l in json.load(open(sys.argv[1]))["layers"]))' \
        "$tmp.json")
      rm -f "$tmp.json"
      same=""
      for earlier in $plans; do
        [[ $earlier == "$plan" ]] && break
        [[ ${ran["$earlier-$p"]:-} == "$grids" && -f "$out/$platform-$earlier-$p.json" ]] && same=$earlier && break
      done
      ran["$plan-$p"]=$grids
      if [[ -n $same ]]; then
        echo "   the same grids as $same: its run stands for both"
        cp "$out/$platform-$same-$p.json" "$out/$name.json"
        { echo "(the same grids as plan $same, whose run this is)"; cat "$out/$platform-$same-$p.txt"; } > "$out/$name.txt"
        grep "^$platform,$same,$p," "$csv" | sed "s/^$platform,$same,/$platform,$plan,/" >> "$csv"
        continue
      fi
      start=$(date +%s)
      timeout "$limit" bash bench/peak_pss.sh "$out/$name.rss" \
        bash scripts/smpirun.sh --platform "$platform" --np "$p" "$smpi_build/convgrid" step --network resnet50 \
        --batch 256 $(plan_flags "$plan") --profile "$profile" --compute model --json "$out/$name.json" > "$out/$name.txt" 2>&1
      status=$?
      wall=$(($(date +%s) - start))
      rss=$(tail -1 "$out/$name.rss" 2>/dev/null || echo 0)
      rm -f "$out/$name.rss"
      if [[ $status -eq 0 && -f $out/$name.json ]]; then
        /usr/bin/python3 - "$out/$name.json" "$platform" "$plan" "$p" "$wall" "$rss" >> "$csv" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(",".join([sys.argv[2], sys.argv[3], sys.argv[4], "yes", "yes" if j["words_equal_model_on_every_rank"] else "no",
                str(j["step_seconds"]), str(j["model_step_seconds"]), str(j["step_words"]), sys.argv[5], sys.argv[6]]))
PY
        echo "   done in ${wall} s, peak ${rss} kB"
      else
        layers=$(grep -cE '^(conv[0-9]|res|fc)' "$out/$name.txt" || true)
        echo "   not finished (status $status after ${wall} s, $layers layers done): $(tail -1 "$out/$name.txt")"
        echo "$platform,$plan,$p,no ($layers layers in ${wall} s),,,,,$wall,$rss" >> "$csv"
      fi
    done
  done
}

study_start=$(date +%s)
running=0
for platform in $platforms; do
  if [[ $jobs -ge 2 ]]; then
    run_platform "$platform" 2>&1 | sed -u "s/^/[$platform] /" &
    running=$((running + 1))
    if [[ $running -ge $jobs ]]; then wait -n; running=$((running - 1)); fi
  else
    run_platform "$platform"
  fi
done
wait
{ echo "$header"; for platform in $platforms; do cat "$out/.scale-$platform.csv"; rm -f "$out/.scale-$platform.csv"; done; } \
  > "$out/scale.csv"
echo "the study took $(( $(date +%s) - study_start )) s ($jobs platforms side by side)"

# The tables of docs/scale.md and the plot of simulated against modelled step time.
/usr/bin/python3 bench/scale_report.py "$out"
