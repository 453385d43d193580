package org.ding4j.example.ac;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TD3 and SAC on Pendulum through the learner, from the embedded DI-engine defaults: each reaches the stop value
 * (-250 over 5 evaluation episodes), writes its best checkpoint with every section and its summary; bad values are
 * refused with the key before anything is written.
 */
class ActorCriticPipelineTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void threads()
    {
        Threads.configure(1, 1, 1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void solvesFromTheEmbeddedDefaults(final String algorithm) throws Exception
    {
        final Path exp = dir.resolve(algorithm);
        final ActorCriticPipeline pipeline = new ActorCriticPipeline(Config.empty().with("policy.type", algorithm)
            .with("exp_name", exp.toString()));
        final ActorCriticPipeline.Summary summary = pipeline.run(p -> { });
        assertTrue(summary.solved(), algorithm + " reached " + summary.bestEvalReturn() + " after "
            + summary.envSteps() + " env steps");
        assertTrue(summary.bestEvalReturn() >= -250);
        final Map<?, ?> json = new ObjectMapper().readValue(exp.resolve("summary.json").toFile(), Map.class);
        assertEquals(true, json.get("solved"));
        assertEquals(algorithm, json.get("algorithm"));
        final Map<String, Object> best = new TorchCheckpointIO().read(Path.of((String)json.get("best_checkpoint")));
        final Map<?, ?> model = (Map<?, ?>)best.get("model");
        assertTrue(model.containsKey("actor.0.weight") && model.containsKey("critic.q2.0.weight"), model.keySet()
            .toString());
        for (final String key : "td3".equals(algorithm) ? new String[] {"optimizer_actor", "optimizer_critic"}
            : new String[] {"optimizer_q", "optimizer_policy", "optimizer_alpha", "log_alpha"})
        {
            assertTrue(best.containsKey(key), key + " in " + best.keySet());
        }
        assertTrue(best.containsKey("pipeline") && best.containsKey("random"), best.keySet().toString());
        // `ding4j eval`'s path: the best net on 20 fresh starts, far above an untrained one's ~-1200.
        final double[] eval = pipeline.evaluate(best, 20, 12345);
        assertTrue(eval[0] > -500 && eval[1] <= eval[0] && eval[0] <= eval[2], java.util.Arrays.toString(eval));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "td3 | policy.model.obs_shape | 4",
        "sac | policy.model.action_shape | 2",
        "td3 | policy.learn.target_theta | -0.1",
        "sac | policy.learn.target_theta | 1.5",
        "td3 | policy.learn.noise_range.max | -0.2",
        "td3 | policy.learn.noise_range.min | 0.3",
        "sac | policy.learn.alpha | 0",
        "td3 | policy.model.twin_critic | false"})
    void refusesABadValueNamingItsKey(final String algorithm, final String key, final String value)
    {
        final Path exp = dir.resolve("bad");
        final Object parsed = "false".equals(value) ? Boolean.FALSE : value.contains(".")
            ? (Object)Double.parseDouble(value) : (Object)Long.parseLong(value);
        final ConfigException ex = assertThrows(ConfigException.class, () -> new ActorCriticPipeline(Config.empty()
            .with("policy.type", algorithm).with("exp_name", exp.toString()).with(key, parsed)));
        assertTrue(ex.getMessage().contains(key) && ex.getMessage().contains(value), ex.getMessage());
        assertFalse(Files.exists(exp), "nothing written");
    }

    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void refusesAnAsymmetricNoiseClipOrAnUnknownType(final String algorithm)
    {
        if ("td3".equals(algorithm))
        {
            final ActorCriticPipeline pipeline = new ActorCriticPipeline(Config.empty().with("policy.type", "td3")
                .with("policy.learn.noise_range.min", -0.2));
            final ConfigException ex = assertThrows(ConfigException.class, pipeline::newPolicy);
            assertTrue(ex.getMessage().contains("policy.learn.noise_range.min"), ex.getMessage());
            return;
        }
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> new ActorCriticPipeline(Config.empty().with("policy.type", "ppo")));
        assertTrue(ex.getMessage().contains("policy.type") && ex.getMessage().contains("ppo"), ex.getMessage());
    }
}
