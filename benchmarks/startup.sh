#!/usr/bin/env bash
# Time outside training against the start-up floor, seeds 0-4: for each seed `ding4j info` (a JVM that starts, loads
# the native libraries a run needs, prints and exits: the floor) and then `ding4j train --config C --seed S` for each
# config given (default: the main job's), every one timed as a whole process. Outside = process wall - training
# wall (summary.json's wall_s, the training loop from the first collect to the last update). Prints one row per run
# and the medians. Build first (mvn -B -q package -DskipTests); runs in a scratch folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
configs=()
for config in "${@:-$here/examples/cartpole_dqn.yaml}"; do configs+=("$(realpath "$config")"); done
work="$(mktemp -d)"
cd "$work"
# The first run after a build writes the launcher's class-data archive (a slower run, not in the table); on JDK 25
# (the launcher's choice when JAVA_HOME is unset and one is installed) the launch after it makes the AOT cache from
# that run's recording (a few seconds, not in the table). JAVA_HOME=... picks the JDK for the whole table.
"$here/ding4j" train --set exp_name=archive --set pipeline.max_train_iter=100 >/dev/null
"$here/ding4j" info >/dev/null
elapsed() { local start end; start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N); python3 -c "print($end - $start)"; }
for seed in 0 1 2 3 4; do
    echo "floor info $seed $(elapsed "$here/ding4j" info)"
    for config in "${configs[@]}"; do
        name="$(basename "$config" .yaml)"
        wall=$(elapsed "$here/ding4j" train --config "$config" --seed "$seed" --set "exp_name=${name}_$seed")
        python3 -c "import json; s = json.load(open('${name}_$seed/summary.json')); print('run $name $seed $wall',
            s['wall_s'], s['solved'], s['solved_at_env_step'], s['solved_at_s'])"
    done
done | python3 -c "
import statistics, sys
rows = [line.split() for line in sys.stdin]
floors = [float(r[3]) for r in rows if r[0] == 'floor']
print('%-16s %4s %9s %8s %9s %7s %6s %13s %10s' % ('run', 'seed', 'process_s', 'train_s', 'outside_s', '/floor',
      'solved', 'steps_to_solve', 's_to_solve'))
for r in rows:
    if r[0] == 'floor':
        print('%-16s %4s %9.2f' % ('floor (info)', r[2], float(r[3])))
for name in dict.fromkeys(r[1] for r in rows if r[0] == 'run'):
    runs = [r for r in rows if r[0] == 'run' and r[1] == name]
    for r in runs:
        p, t = float(r[3]), float(r[4])
        print('%-16s %4s %9.2f %8.2f %9.2f %7.2f %6s %13s %10.2f' % (name, r[2], p, t, p - t,
              (p - t) / statistics.median(floors), r[5], r[6], float(r[7]) if r[7] != 'None' else -1))
    p = statistics.median(float(r[3]) for r in runs); t = statistics.median(float(r[4]) for r in runs)
    o = statistics.median(float(r[3]) - float(r[4]) for r in runs)
    s = statistics.median(float(r[7]) for r in runs if r[7] != 'None')
    print('%-16s %4s %9.2f %8.2f %9.2f %7.2f %6s %13s %10.2f' % (name, 'med', p, t, o, o / statistics.median(floors),
          sum(r[5] == 'True' for r in runs), statistics.median(int(r[6]) for r in runs), s))
print('floor median %.2f s' % statistics.median(floors))
"
