#!/usr/bin/env bash
# The class-data archive can never break the tool: with a damaged archive (header only, bytes flipped), a folder in
# its place, or a garbage file left as a finished partial one, `ding4j train` still runs and exits 0, no JVM crashes
# (no hs_err file), and a good archive is made and used again afterwards. Needs the packaged jar
# (mvn -B -q package -DskipTests); uses target/ding4j.jsa* of this checkout, or target/ding4j.aot* (the AOT cache)
# when JAVA_HOME is a JDK 25 or later. The launcher runs on JAVA_HOME's JDK: the java on the PATH's when unset here.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$PWD"
if [[ -z "${JAVA_HOME:-}" ]]; then
    java_path="$(readlink -f "$(command -v java)")"
    export JAVA_HOME="${java_path%/bin/java}"
fi
archive=target/ding4j.jsa
feature="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$JAVA_HOME/release" 2>/dev/null || true)"
if (( ${feature:-0} >= 25 )); then
    archive=target/ding4j.aot
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
train() {
    local name="$1"
    local rc=0
    (cd "$work" && "$here/ding4j" train --set "exp_name=$work/$name" --set pipeline.max_train_iter=20) \
        > "$work/$name.log" 2>&1 || rc=$?
    if [[ "$rc" != 0 ]] || ! grep -q "after .* env steps and 20 updates" "$work/$name.log" \
        || compgen -G "$work/hs_err*" > /dev/null; then
        echo "archive check: $name failed (rc $rc)"; cat "$work/$name.log"; exit 1
    fi
}
good() {
    [[ -f "$archive" && -f "$archive.cksum" ]] \
        || { echo "archive check: no verified archive after $1"; ls target; exit 1; }
}
rm -rf "$archive" "$archive".*
train first; train moved; good "a build and two runs"
chmod u+w "$archive"
truncate -s 4096 "$archive"; train header-only; train after-header-only; good "a header-only archive"
chmod u+w "$archive"
printf '\xff\xff\xff\xff' | dd of="$archive" bs=1 seek=$(( $(stat -c %s "$archive") / 2 )) conv=notrunc 2>/dev/null
train flipped; train after-flipped; good "flipped bytes"
rm -f "$archive" "$archive.cksum"; mkdir "$archive"
train folder; [[ -d "$archive" ]] && ! compgen -G "$archive.partial-*" > /dev/null \
    || { echo "archive check: a folder in the archive's place was not left alone, or an archive was written"; exit 1; }
rmdir "$archive"
head -c 5000000 /dev/urandom > "$archive.partial-99999"; touch "$archive.partial-99999.complete"
train garbage-partial; train after-garbage; good "a garbage partial archive"
# A run with options of the user's that make the JVM refuse the archive (a JFR recording refuses JDK 25's AOT
# cache) keeps it for the plain runs it fits.
sum_before="$(cat "$archive.cksum")"
DING4J_JAVA_OPTS="-XX:StartFlightRecording:filename=$work/run.jfr" train user-options
[[ -f "$archive" && "$(cat "$archive.cksum")" == "$sum_before" ]] \
    || { echo "archive check: a run with DING4J_JAVA_OPTS removed or replaced the archive"; exit 1; }
echo "archive check ($archive): every damaged archive was refused before a JVM mapped it; runs exit 0, no crash"
