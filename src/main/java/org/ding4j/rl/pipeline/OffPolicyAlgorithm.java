package org.ding4j.rl.pipeline;

import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigSchema;
import org.ding4j.internal.Closing;
import org.ding4j.policy.Policy;

/**
 * An off-policy algorithm as the one pipeline ({@code org.ding4j.rl.OffPolicyPipeline}) takes it: its
 * embedded defaults and the rules of its own keys, the checks across keys and the environment's spaces, and the
 * parts of a run. DQN ({@code policy.type: dqn}), TD3 and SAC implement it.
 */
public interface OffPolicyAlgorithm
{
    /** @return its {@code policy.type} */
    String name();

    /** @return the class-path resource of its embedded defaults (a user's config is deep-merged over them) */
    String defaults();

    /**
     * Adds the rules of the keys only this algorithm has (the pipeline adds those every algorithm shares).
     *
     * @param schema the schema being built over {@link #defaults()}
     */
    void rules(ConfigSchema.Builder schema);

    /**
     * Checks what single keys cannot: the environment's spaces against the config (a clear error naming the space
     * when it does not fit), keys that depend on each other, the modes it supports.
     *
     * @param cfg the effective config, every key already checked by the schema
     * @throws org.ding4j.config.ConfigException naming the key
     */
    void check(Config cfg);

    /**
     * @param cfg the effective config
     * @return the parameters of every net the policy trains (its targets and copies are counted by the caller)
     */
    long parameterCount(Config cfg);

    /**
     * @param cfg the effective config
     * @return the bytes one replay transition takes (a replay that would fill more than half the heap is refused)
     */
    long bytesPerTransition(Config cfg);

    /**
     * Runs throwaway updates before the run is timed (the JIT and libtorch's first calls); none by default.
     *
     * @param cfg the effective config
     */
    default void warmUp(final Config cfg)
    {
    }

    /**
     * Builds one run's policy, replay, collector and evaluator, the nets drawn from libtorch's global generator
     * (seeded with {@code seed} just before).
     *
     * @param cfg      the effective config
     * @param seed     the config's seed (what every rank shares: the evaluation's starts)
     * @param rankSeed this rank's seed (its exploration, env starts and replay sampling; {@code seed} on rank 0)
     * @return the parts, closed by the run
     */
    OffPolicyParts<?> parts(Config cfg, long seed, long rankSeed);

    /**
     * Evaluates a checkpoint's policy ({@code ding4j eval}) on fresh starts of the config's env.
     *
     * @param cfg      the effective config
     * @param state    the checkpoint (its {@code model} at least)
     * @param episodes episodes
     * @param seed     the starts' seed
     * @return {@code {mean, min, max}} return
     * @throws IllegalArgumentException if the checkpoint does not fit the config's nets (the tensor named)
     */
    double[] evaluate(Config cfg, Map<String, Object> state, int episodes, long seed);

    /**
     * A policy of the config's nets holding a checkpoint's model alone, as {@link #evaluate} reads it (a model-only
     * file, or one saved from Python, too): for a service that acts on a saved policy without training.
     *
     * @param cfg   the effective config
     * @param state the checkpoint (its {@code model} at least)
     * @return the policy, {@link AutoCloseable}: the caller closes it
     * @throws IllegalArgumentException if the checkpoint does not fit the config's nets (the tensor named)
     */
    Policy<?> withModel(Config cfg, Map<String, Object> state);

    /**
     * {@link #withModel}'s common part: loads into a policy just made, and closes it should the load fail.
     *
     * @param policy the new policy
     * @param load   what loads the checkpoint's model into it
     * @param <P>    its type
     * @return the policy, loaded
     */
    static <P extends AutoCloseable> P loaded(final P policy, final java.util.function.Consumer<P> load)
    {
        try
        {
            load.accept(policy);
            return policy;
        }
        catch (final RuntimeException ex)
        {
            Closing.afterFailure(List.of(policy), ex);
            throw ex;
        }
    }
}
