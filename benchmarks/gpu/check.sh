#!/usr/bin/env bash
# The prepared GPU check (benchmarks/gpu/README.md): builds the CUDA kernels where nvcc is found, else takes the
# library built here (./cppbuild.sh --cuda, carried along), and runs check.py. Run from the repository root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/../.." && pwd)"
lib="${DING4J_CUDA_LIB:-$top/cppbuild/linux-x86_64/lib/libding4j_kernels_cuda.so}"
if command -v nvcc > /dev/null; then
    lib="$(mktemp -d)/libding4j_kernels_cuda.so"
    nvcc -std=c++17 -O3 -Xcompiler -fPIC -shared -gencode arch=compute_90,code=sm_90 -o "$lib" \
        "$top/native/ding4j_kernels_cuda.cu"
fi
if [[ ! -f "$lib" ]]; then
    echo "no nvcc and no $lib: build it first with ./cppbuild.sh --cuda (compiling needs no GPU)" >&2
    exit 2
fi
exec python3 "$here/check.py" "$lib"
