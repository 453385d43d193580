#!/usr/bin/env bash
# Runs the shipped configs (seeds 0-4) through two built checkouts of ding4j, alternating per seed, and prints each
# run's env steps, updates, best evaluation return, training wall and updates/s from its summary.json.
# Usage: bash benchmarks/compare_builds.sh OLD_CHECKOUT NEW_CHECKOUT [CONFIG...]
#   each checkout built with `mvn -B -q package -DskipTests`; CONFIG: cartpole (the embedded default) or the name of
#   a file under examples/ that both checkouts have (default: cartpole pendulum_td3 pendulum_sac; since 2026-12-06
#   the Pendulum files hold the fast settings and pendulum_*_dizoo.yaml DI-engine's). Runs go to a temporary folder.
set -euo pipefail
old="$(cd "$1" && pwd)"; new="$(cd "$2" && pwd)"; shift 2
configs=("${@:-cartpole pendulum_td3 pendulum_sac}")
out="$(mktemp -d)"
uptime
for cfg in ${configs[@]}; do
  for seed in 0 1 2 3 4; do
    for tree in "$old" "$new"; do
      name="$(basename "$tree")-$cfg-$seed"
      args=(train --seed "$seed" --set "exp_name=$name")
      [[ "$cfg" == cartpole ]] || args+=(--config "$tree/examples/$cfg.yaml")
      (cd "$out" && "$tree/ding4j" "${args[@]}" > "$name.log" 2>&1)
      python3 - "$out/$name/summary.json" "$cfg" "$seed" "$(basename "$tree")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]} seed {sys.argv[3]} {sys.argv[4]}: env steps {d['env_steps']} updates {d['train_iter']} "
      f"best {d['best_eval_return']:.2f} training {d['wall_s']:.2f} s {d['train_iter'] / d['wall_s']:.0f} updates/s")
PY
    done
  done
done
