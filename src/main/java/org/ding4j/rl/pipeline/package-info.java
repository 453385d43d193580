/**
 * The off-policy pipeline's shared half and what an algorithm plugs into it: {@link
 * org.ding4j.rl.pipeline.OffPolicyAlgorithm} (defaults, key rules, checks, parts) and {@link
 * org.ding4j.rl.pipeline.OffPolicyParts} (policy, replay, collector, evaluator), driven by {@link
 * org.ding4j.rl.pipeline.OffPolicyRun} (learner, process group, evaluation schedule, checkpoints' extra state,
 * summary) and {@link org.ding4j.rl.pipeline.SerialLoop}; the resume of a restarted attempt ({@link
 * org.ding4j.rl.pipeline.Restarts}). {@code org.ding4j.rl.OffPolicyPipeline} picks the algorithm by
 * {@code policy.type}.
 */
package org.ding4j.rl.pipeline;
