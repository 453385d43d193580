/**
 * Data-parallel training across ranks: {@code DistInfo} (torchrun's RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR /
 * MASTER_PORT), {@code DistGroup} (a c10d TCPStore rendezvous with Gloo for CPU and NCCL for CUDA tensors),
 * {@code GradientSync} (one all-reduce per flat gradient buffer before the fused optimizer's step),
 * {@code GroupLogReducer} (the learner's log_reduce over the group) and {@code DistTraining} (all of it wired into
 * a learner).
 */
package org.ding4j.dist;
