#!/usr/bin/env bash
# Two or more builds (or JDKs) of ding4j timed in turn on the same training run, for changes to the start-up. Each ARM
# is LABEL=CHECKOUT or LABEL=CHECKOUT@JAVA_HOME (a built checkout: mvn -B -q package -DskipTests); after `--` come the
# `train` arguments (default: the main job). Two untimed runs per arm first (its class-data archive or AOT cache),
# then N rounds with the arms in turn; prints each run (process and training wall s, JVM start to `train` s) and each
# arm's medians. Runs in a scratch folder. Example:
#   bash benchmarks/start_ab.sh 6 before=/tmp/before now=. -- --config examples/pendulum_sac.yaml
set -euo pipefail
rounds="$1"
shift
labels=()
checkouts=()
homes=()
while [[ $# -gt 0 && "$1" != -- ]]; do
    spec="${1#*=}"
    labels+=("${1%%=*}")
    homes+=("$([[ "$spec" == *@* ]] && echo "${spec#*@}" || true)")
    checkouts+=("$(realpath "${spec%@*}")")
    shift
done
[[ $# -gt 0 ]] && shift
args=()
for arg in "$@"; do   # a config file given relative to here, resolved before the scratch folder is entered
    if [[ -f "$arg" ]]; then args+=("$(realpath "$arg")"); else args+=("$arg"); fi
done
cd "$(mktemp -d)"
run() {
    JAVA_HOME="${homes[$1]}" "${checkouts[$1]}/ding4j" train ${args[@]+"${args[@]}"} --set "exp_name=$2" >/dev/null 2>&1
}
for a in "${!labels[@]}"; do run "$a" "warm_$a"; run "$a" "warm2_$a"; done
for round in $(seq 1 "$rounds"); do
    for a in "${!labels[@]}"; do
        name="${labels[$a]}_$round"
        start=$(date +%s.%N)
        run "$a" "$name"
        end=$(date +%s.%N)
        python3 -c "import json; s = json.load(open('$name/summary.json')); print('${labels[$a]}', '%.3f' % ($end - \
$start), '%.3f' % s['wall_s'], '%.3f' % s['startup']['jvm_start_s'])"
    done
done | tee runs.txt
python3 - <<'PY'
import statistics
rows = [line.split() for line in open('runs.txt')]
for label in dict.fromkeys(r[0] for r in rows):
    runs = [r for r in rows if r[0] == label]
    process = [float(r[1]) for r in runs]
    training = [float(r[2]) for r in runs]
    print('%-10s process %.3f  training %.3f  outside %.3f  (median of %d)' % (label, statistics.median(process),
          statistics.median(training), statistics.median([p - t for p, t in zip(process, training)]), len(runs)))
PY
