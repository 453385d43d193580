#!/usr/bin/env bash
# TD3 and SAC on Pendulum-v1, seeds 0-4 each, alternating algorithms: `ding4j train --config
# examples/pendulum_{td3,sac}.yaml --seed S` (each timed as a whole process), one table from summary.json: whether it
# reached the stop value (-250 over the config's 10 evaluation episodes), the env steps and training seconds to the first such
# evaluation, and the whole run's updates, training and process wall. Extra arguments go to every train (e.g.
# --set policy.learn.fused_update=false). Build first (mvn -B -q package -DskipTests); runs in a scratch folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
cd "$work"
printf '%-4s %4s %6s %13s %10s %8s %8s %10s\n' algo seed solved steps_to_solve s_to_solve updates train_s process_s
for seed in 0 1 2 3 4; do
    for algo in td3 sac; do
        exp="${algo}_seed${seed}"
        start=$(date +%s.%N)
        "$here/ding4j" train --config "$here/examples/pendulum_$algo.yaml" --seed "$seed" --set "exp_name=$exp" "$@" \
            >/dev/null
        end=$(date +%s.%N)
        python3 - "$exp/summary.json" "$algo" "$seed" "$start" "$end" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print('%-4s %4s %6s %13d %10.2f %8d %8.2f %10.2f' % (sys.argv[2], sys.argv[3], s['solved'], s['solved_at_env_step'],
      s['solved_at_s'], s['train_iter'], s['wall_s'], float(sys.argv[5]) - float(sys.argv[4])))
PY
    done
done
