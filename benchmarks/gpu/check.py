"""The GPU check of ding4j's CUDA paths, for a machine with a GPU and PyTorch but no Java (the lent device).

1. native/ding4j_kernels_cuda.cu (the fused Adam, AdamW, AMSGrad, SGD steps and the gradient norm, through ctypes on
   PyTorch's current stream) against torch.optim on the same CUDA tensors, 20 steps: max relative difference.
2. NCCL with GradientSync's bucket plan (the flat gradient buffer cut at parameter boundaries, last parameter first,
   each bucket >= the bucket size; one async all-reduce per bucket, all waited on before the step) against one
   all-reduce of the flat buffer: bit-identical results, and the time of each per update, on every visible GPU
   (world size = GPU count; 1 GPU still runs the same calls on a one-rank NCCL group).

Prints one line per check ending in OK or FAIL and exits 1 if any failed. Usage: python3 check.py LIB
"""
import ctypes
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

# The 1.08M-parameter MLP of benchmarks/README.md's scaling table.
WIDTHS = [64, 512, 512, 512, 512, 512, 1]
BUCKET_BYTES = 1 << 20
failed = []


def report(name, value, limit):
    ok = value <= limit
    print(f"{name}: {value:.3g} (limit {limit:g}) {'OK' if ok else 'FAIL'}", flush=True)
    if not ok:
        failed.append(name)


def kernels(lib_path):
    lib = ctypes.CDLL(lib_path)
    i64, dbl, f32, i32 = ctypes.c_int64, ctypes.c_double, ctypes.c_float, ctypes.c_int
    lib.ding4j_cuda_adam_step.argtypes = [i64] * 6 + [dbl] * 5 + [i64, i32, i32, f32, i64]
    lib.ding4j_cuda_sgd_step.argtypes = [i64] * 4 + [dbl] * 4 + [i32, i32, f32, i64]
    lib.ding4j_cuda_sum_squares.argtypes = [i64, i64, ctypes.POINTER(dbl), i64]
    stream = torch.cuda.current_stream().cuda_stream
    for n in (1, 1000, 1 << 20):
        for name, make, amsgrad, decoupled, wd in (
                ("adam", torch.optim.Adam, False, False, 0.0), ("adam+wd", torch.optim.Adam, False, False, 0.01),
                ("amsgrad", torch.optim.Adam, True, False, 0.0), ("adamw", torch.optim.AdamW, False, True, 0.01)):
            torch.manual_seed(n)
            p = torch.randn(n, device="cuda")
            ref = p.clone().requires_grad_(True)
            opt = make([ref], lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=wd, amsgrad=amsgrad,
                       foreach=False, fused=False)
            m, v, vmax = (torch.zeros_like(p) for _ in range(3))
            for step in range(1, 21):
                g = torch.randn(n, device="cuda")
                ref.grad = g.clone()
                opt.step()
                code = lib.ding4j_cuda_adam_step(p.data_ptr(), g.data_ptr(), m.data_ptr(), v.data_ptr(),
                                                 vmax.data_ptr(), n, 1e-3, 0.9, 0.999, 1e-8, wd, step, int(amsgrad),
                                                 int(decoupled), 1.0, stream)
                assert 0 == code, f"cudaError {code}"
            torch.cuda.synchronize()
            report(f"kernel {name} n={n} after 20 steps, max |p - torch.optim| / max |p|",
                   ((p - ref.detach()).abs().max() / ref.detach().abs().max()).item(), 1e-5)
        torch.manual_seed(n)
        p = torch.randn(n, device="cuda")
        ref = p.clone().requires_grad_(True)
        opt = torch.optim.SGD([ref], lr=1e-2, momentum=0.9, nesterov=True, weight_decay=0.01, foreach=False)
        buf = torch.zeros_like(p)
        for step in range(20):
            g = torch.randn(n, device="cuda")
            ref.grad = g.clone()
            opt.step()
            code = lib.ding4j_cuda_sgd_step(p.data_ptr(), g.data_ptr(), buf.data_ptr(), n, 1e-2, 0.9, 0.0, 0.01, 1,
                                            int(0 == step), 1.0, stream)
            assert 0 == code, f"cudaError {code}"
        torch.cuda.synchronize()
        report(f"kernel sgd-nesterov n={n} after 20 steps, relative difference",
               ((p - ref.detach()).abs().max() / ref.detach().abs().max()).item(), 1e-5)
        g = torch.randn(n, device="cuda")
        out = ctypes.c_double()
        assert 0 == lib.ding4j_cuda_sum_squares(g.data_ptr(), n, ctypes.byref(out), stream)
        expected = g.double().pow(2).sum().item()
        report(f"kernel sum_squares n={n}, relative difference", abs(out.value - expected) / expected, 1e-9)


def buckets_of(sizes):
    """GradientSync's plan: walk the parameters from the last, close a bucket at a boundary once it is big enough."""
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    plan, hi = [], sum(sizes)
    for k in range(len(sizes) - 1, -1, -1):
        lo = offsets[k]
        if 0 == k or (hi - lo) * 4 >= BUCKET_BYTES:
            plan.append((lo, hi))
            hi = lo
    return plan


def nccl_rank(rank, world, port, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    sizes = []
    for a, b in zip(WIDTHS, WIDTHS[1:]):
        sizes += [a * b, b]
    numel = sum(sizes)
    plan = buckets_of(sizes)
    torch.manual_seed(rank)
    grads = torch.randn(numel, device="cuda")
    flat = grads.clone()
    dist.all_reduce(flat)
    bucketed = grads.clone()
    works = [dist.all_reduce(bucketed[lo:hi], async_op=True) for lo, hi in plan]
    for work in works:
        work.wait()
    identical = torch.equal(flat, bucketed)
    times = {}
    for name in ("flat", "buckets", "flat", "buckets"):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(200):
            if "flat" == name:
                dist.all_reduce(grads)
            else:
                for work in [dist.all_reduce(grads[lo:hi], async_op=True) for lo, hi in plan]:
                    work.wait()
        torch.cuda.synchronize()
        times.setdefault(name, []).append((time.perf_counter() - start) / 200 * 1e6)
    if 0 == rank:
        results.put((identical, len(plan), numel, {k: min(v) for k, v in times.items()}))
    dist.destroy_process_group()


def nccl():
    world = torch.cuda.device_count()
    port = 29400 + os.getpid() % 1000
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(nccl_rank, args=(world, port, results), nprocs=world, join=True)
    identical, count, numel, times = results.get()
    print(f"nccl world {world}, {numel} parameters, {count} buckets of >= {BUCKET_BYTES} bytes: "
          f"flat {times['flat']:.1f} us, buckets {times['buckets']:.1f} us per all-reduce of the gradients", flush=True)
    report(f"nccl world {world}: buckets differ from the flat all-reduce (elements)", 0.0 if identical else 1.0, 0)


if __name__ == "__main__":
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL {torch.cuda.nccl.version()}, "
          f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}", flush=True)
    kernels(sys.argv[1])
    nccl()
    print("FAILED: " + ", ".join(failed) if failed else "all checks OK", flush=True)
    sys.exit(1 if failed else 0)
