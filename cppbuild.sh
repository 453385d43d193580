#!/bin/bash
# Builds native/ by hand, JavaCPP-presets style, into cppbuild/<platform><extension>/lib/:
#   libding4j_kernels.so       the CPU kernels with a C ABI (the JVM gets the same code through the Maven build)
#   libding4j_kernels_cuda.so  with --cuda: the CUDA kernels (needs nvcc; compiling needs no GPU)
# Usage: ./cppbuild.sh [install|clean] [-platform <os-arch>] [--cuda]
set -eu

OPERATION=install
PLATFORM=
CUDA=false
while [[ $# -gt 0 ]]; do
    case "$1" in
        install|clean) OPERATION="$1" ;;
        -platform) shift; PLATFORM="$1" ;;
        --cuda|-extension) CUDA=true; [[ "$1" == "-extension" ]] && shift ;;
        *) echo "Error: unknown argument \"$1\" (usage: ./cppbuild.sh [install|clean] [-platform P] [--cuda])"; exit 2 ;;
    esac
    shift
done

if [[ -z "$PLATFORM" ]]; then
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) PLATFORM=linux-x86_64 ;;
        Linux-aarch64) PLATFORM=linux-arm64 ;;
        *) PLATFORM="$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)" ;;
    esac
fi

TOP="$(cd "$(dirname "$0")" && pwd)"
EXTENSION=
$CUDA && EXTENSION=-gpu
OUT="$TOP/cppbuild/$PLATFORM$EXTENSION"

if [[ "$OPERATION" == clean ]]; then
    rm -rf "$TOP/cppbuild"
    exit 0
fi

case $PLATFORM in
    linux-x86_64|linux-arm64)
        mkdir -p "$OUT/lib" "$OUT/include"
        cp "$TOP"/native/*.h "$OUT/include/"
        # -O3 without -ffast-math: the kernels must round as libtorch's float ops do; -fno-math-errno only lets
        # gcc vectorise sqrt; -ffp-contract=off keeps every vector clone rounding alike (pom.xml says why).
        g++ -std=c++17 -O3 -fno-math-errno -ffp-contract=off -fPIC -shared -Wall -Wextra -Werror -o "$OUT/lib/libding4j_kernels.so" \
            "$TOP/native/ding4j_kernels.cpp"
        echo "built $OUT/lib/libding4j_kernels.so"
        if $CUDA; then
            NVCC="${NVCC:-$(command -v nvcc || true)}"
            if [[ -z "$NVCC" ]]; then
                echo "Error: --cuda needs nvcc on PATH (or NVCC=/path/to/nvcc)"
                exit 1
            fi
            # sm_80 and sm_90 cover A100 and H100/H200; compute_90 PTX lets newer GPUs JIT it.
            "$NVCC" -std=c++17 -O3 -Xcompiler -fPIC -shared \
                -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                -gencode arch=compute_90,code=compute_90 \
                -o "$OUT/lib/libding4j_kernels_cuda.so" "$TOP/native/ding4j_kernels_cuda.cu"
            echo "built $OUT/lib/libding4j_kernels_cuda.so"
        fi
        ;;
    *)
        echo "Error: Platform \"$PLATFORM\" is not supported"
        exit 1
        ;;
esac
