#!/usr/bin/env bash
# The main job's acceptance run (issue 6): `ding4j train --seed S` for seeds 0-4 in serial and parallel mode, then
# `ding4j eval --ckpt ckpt_best.pth.tar --episodes 100` (fresh random starts) on each best checkpoint, one table.
# Build first (mvn -B -q package -DskipTests); runs in a scratch folder given as $1 (default: a new temp folder).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work" && cd "$work"
printf '%-8s %4s %6s %9s %8s %8s %10s %8s %10s\n' mode seed solved env_steps updates wall_s updates/s eval100 native_s
for mode in serial parallel; do
    for seed in 0 1 2 3 4; do
        exp="${mode}_seed${seed}"
        "$here/ding4j" train --seed "$seed" --set "exp_name=$exp" --set "pipeline.mode=$mode" >/dev/null
        eval_json="$("$here/ding4j" eval --ckpt "$exp/ckpt/ckpt_best.pth.tar" --episodes 100)"
        python3 - "$exp/summary.json" "$eval_json" "$mode" "$seed" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); e = json.loads(sys.argv[2])
print('%-8s %4s %6s %9d %8d %8.2f %10.0f %8.1f %10.2f' % (sys.argv[3], sys.argv[4], s['solved'], s['env_steps'],
      s['train_iter'], s['wall_s'], s['updates_per_s'], e['mean_return'], s['startup'].get('native_load_s', float('nan'))))
PY
    done
done
