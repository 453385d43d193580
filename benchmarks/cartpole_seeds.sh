#!/usr/bin/env bash
# The main job's acceptance run: `ding4j train --seed S` for seeds 0-4 in serial and parallel mode (each timed as
# a whole process), then `ding4j eval --ckpt ckpt_best.pth.tar --episodes 100` (fresh random starts) on each best
# checkpoint, one table with the start-up steps from summary.json.
# Build first (mvn -B -q package -DskipTests); runs in a scratch folder given as $1, which must be empty (default: a
# new temp folder): a run into a folder of an earlier run writes a renewed one, and the table reads the named ones.
# The first `train` after a build also writes the launcher's class-data archive (a slower run, not in the table); on
# JDK 25 the launch after it makes the AOT cache from that run's recording (a few seconds: the `info`, not in the table).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work" && cd "$work"
[[ -z "$(ls -A)" ]] || { echo "cartpole_seeds.sh: $work is not empty (give a new folder)" >&2; exit 2; }
"$here/ding4j" train --set exp_name=archive --set pipeline.max_train_iter=100 >/dev/null
"$here/ding4j" info >/dev/null
printf '%-8s %4s %6s %9s %7s %7s %9s %9s %6s %6s %6s %6s %6s %6s %7s\n' mode seed solved env_steps updates train_s \
    updates/s process_s jvm_s config native wait warmup setup eval100
for mode in serial parallel; do
    for seed in 0 1 2 3 4; do
        exp="${mode}_seed${seed}"
        start=$(date +%s.%N)
        "$here/ding4j" train --seed "$seed" --set "exp_name=$exp" --set "pipeline.mode=$mode" >/dev/null
        end=$(date +%s.%N)
        eval_json="$("$here/ding4j" eval --ckpt "$exp/ckpt/ckpt_best.pth.tar" --episodes 100)"
        python3 - "$exp/summary.json" "$eval_json" "$mode" "$seed" "$start" "$end" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); e = json.loads(sys.argv[2]); u = s['startup']
print('%-8s %4s %6s %9d %7d %7.2f %9.0f %9.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %7.1f' % (sys.argv[3], sys.argv[4],
      s['solved'], s['env_steps'], s['train_iter'], s['wall_s'], s['updates_per_s'],
      float(sys.argv[6]) - float(sys.argv[5]), u['jvm_start_s'], u['config_s'], u['native_load_s'], u['native_wait_s'],
      s['warmup_s'], s['setup_s'], e['mean_return']))
PY
    done
done
