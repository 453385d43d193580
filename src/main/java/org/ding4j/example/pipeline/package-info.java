/**
 * The off-policy pipeline's shared half and what an algorithm plugs into it: {@link
 * org.ding4j.example.pipeline.OffPolicyAlgorithm} (defaults, key rules, checks, parts) and {@link
 * org.ding4j.example.pipeline.OffPolicyParts} (policy, replay, collector, evaluator), driven by {@link
 * org.ding4j.example.pipeline.OffPolicyRun} (learner, process group, evaluation schedule, checkpoints' extra state,
 * summary) and {@link org.ding4j.example.pipeline.SerialLoop}; the resume of a restarted attempt ({@link
 * org.ding4j.example.pipeline.Restarts}). {@code org.ding4j.example.OffPolicyPipeline} picks the algorithm by
 * {@code policy.type}.
 */
package org.ding4j.example.pipeline;
