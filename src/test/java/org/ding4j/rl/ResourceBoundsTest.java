package org.ding4j.rl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ConfigFiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Bounds from the machine and from what can end, for every algorithm, each refused by key before anything starts:
 * collections and evaluations that would not end within a stop's reach, nets that would not fit in memory, and
 * learning rates or temperatures that turn the weights non-finite within a few updates (each of these was accepted,
 * then hung past SIGTERM, ran out of memory, or died with a NaN trace naming no key).
 */
class ResourceBoundsTest
{
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "dqn | policy.collect.n_sample=2147483647 | policy.collect.n_sample: expected an integer in [1, 1048576]",
        "td3 | policy.collect.n_sample=2147483647 | policy.collect.n_sample: expected an integer in [1, 1048576]",
        "sac | env.max_episode_steps=2147483647 | env.n_evaluator_episode: expected episodes x "
            + "env.max_episode_steps <= 100000000 (an evaluation runs every episode to its end), got 10 x 2147483647",
        "dqn | env.n_evaluator_episode=1000000 | env.n_evaluator_episode: expected episodes x "
            + "env.max_episode_steps <= 100000000 (an evaluation runs every episode to its end), got 1000000 x 200",
        "td3 | policy.model.actor_head_hidden_size=65536 | policy.model: expected nets that fit in memory: ",
        "sac | policy.model.critic_head_hidden_size=65536 | policy.model: expected nets that fit in memory: ",
        "dqn | policy.model.encoder_hidden_size_list=[4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,"
            + "4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,"
            + "4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,"
            + "4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096] | policy.model: expected nets that "
            + "fit in memory: ",
        "dqn | policy.learn.learning_rate=1e308 | policy.learn.learning_rate: expected a learning rate in (0, 1] (and "
            + "above 0 in float32), got 1.0E308",
        "dqn | policy.learn.learning_rate=1e-320 | policy.learn.learning_rate: expected a learning rate in (0, 1] (and "
            + "above 0 in float32), got 1.0E-320",
        "td3 | policy.learn.learning_rate_actor=2147483648 | policy.learn.learning_rate_actor: expected a learning "
            + "rate in (0, 1] (and above 0 in float32), got 2.147483648E9",
        "sac | policy.learn.learning_rate_alpha=1e308 | policy.learn.learning_rate_alpha: expected a learning rate "
            + "in (0, 1] (and above 0 in float32), got 1.0E308",
        "sac | policy.learn.alpha=1e300 | policy.learn.alpha: expected a temperature in (0, 100], got 1.0E300",
        "td3 | policy.other.replay_buffer.replay_buffer_size=2147483647 | policy.other.replay_buffer."
            + "replay_buffer_size: expected an integer in [1, ",
        "sac | policy.type=TD3 | policy.type: expected dqn, td3, sac or ppo, got TD3",
        "dqn | env.type=NoSuchEnv | env.type: expected cartpole, pendulum, acrobot, or the name of a class implementing "
            + "org.ding4j.env.Env with a public no-argument constructor; NoSuchEnv is no class on the class path (the "
            + "ding4j command adds yours with DING4J_CLASSPATH=your/classes, for train and eval alike), got \"NoSuchEnv\"",
        "td3 | pipeline.max_env_step=50 | policy.learn.batch_size: expected at most pipeline.max_env_step (50: "
            + "no batch could be sampled before the run ends), got 64",
        "dqn | env.type=org.ding4j.rl.ResourceBoundsTest$HiddenEnv | env.type: expected cartpole, pendulum, "
            + "acrobot, or the name of a class implementing org.ding4j.env.Env with a public no-argument constructor; "
            + "org.ding4j.rl.ResourceBoundsTest$HiddenEnv is not a public static nested class",
        "dqn | env.type=org.ding4j.rl.ResourceBoundsTest$NoSpaces | env.type: "
            + "org.ding4j.rl.ResourceBoundsTest$NoSpaces's env returned no observationSpace() (null)",
    })
    void refusesWhatCannotEndOrFitByKey(final String algorithm, final String override, final String message)
    {
        final List<String> overrides = new ArrayList<>(List.of("policy.type=" + algorithm));
        overrides.add(override);
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> new OffPolicyPipeline(ConfigFiles.override(Config.empty(), overrides)));
        assertTrue(ex.getMessage().startsWith(message), override + " -> " + ex.getMessage());
    }

    /**
     * {@code ding4j eval} builds no replay: a checkpoint trained with a larger heap (a replay this JVM's heap would
     * not hold) evaluates, while a run with that config is refused.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"dqn", "td3", "sac"})
    void evaluationSkipsTheRunsOwnBounds(final String algorithm)
    {
        final Config trained = Config.empty().with("policy.type", algorithm)
            .with("policy.other.replay_buffer.replay_buffer_size", 2_147_483_647L);
        assertThrows(ConfigException.class, () -> new OffPolicyPipeline(trained));
        assertEquals(algorithm, OffPolicyPipeline.forEvaluation(trained).algorithm().name());
        assertThrows(IllegalStateException.class, () -> OffPolicyPipeline.forEvaluation(trained).run(p -> { }));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"dqn", "td3", "sac"})
    void theShippedDefaultsAreWithinEveryBound(final String algorithm)
    {
        assertEquals(algorithm, new OffPolicyPipeline(Config.empty().with("policy.type", algorithm)).algorithm()
            .name());
    }

    /** An env the pipeline cannot make: its class is not public. */
    static final class HiddenEnv extends org.ding4j.env.EnvWrapper
    {
        HiddenEnv()
        {
            super(new org.ding4j.rl.envs.CartPole());
        }
    }

    /** An env without an observation space. */
    public static final class NoSpaces extends org.ding4j.env.EnvWrapper
    {
        /** A CartPole that hides its observation space. */
        public NoSpaces()
        {
            super(new org.ding4j.rl.envs.CartPole());
        }

        @Override
        public org.ding4j.env.Box observationSpace()
        {
            return null;
        }
    }
}
