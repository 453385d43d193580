#!/bin/bash
# The scaling table of benchmarks/README.md ("Scaling out"): a fused MLP step on 1 rank and on 2 ranks in 2 network
# namespaces (src/test/java/org/ding4j/testing/NetnsHosts.java; needs root) at each one-way link delay, flat and
# bucketed all-reduce alternating; with --autograd a libtorch autograd step instead, the all-reduce after backward
# against c10d's Reducer during it. Usage: bash benchmarks/scaling.sh [NAME=WIDTHS:BATCH:UPDATES ...] [--delays-us ...]
# [--autograd]
# SCALING_JAVA_OPTS=-Dding4j.dist.exchangeMaxBytes=0 measures without the direct exchange for small tensors.
set -eu
cd "$(dirname "$0")/.."
mvn -B -q test-compile
mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/scaling.cp -Dmdep.includeScope=test
uptime
java ${SCALING_JAVA_OPTS:-} -cp "target/test-classes:target/classes:$(cat target/scaling.cp)" org.ding4j.dist.ScalingBench \
    "${@:-m1=64,512,512,512,512,512,1:512:40}"
