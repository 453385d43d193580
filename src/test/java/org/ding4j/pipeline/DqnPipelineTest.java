package org.ding4j.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.ding4j.config.Config;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CartPole's dynamics by hand, and a short real DQN run that must solve. */
@Tag("native")
class DqnPipelineTest
{
    @TempDir
    Path dir;

    @Test
    void cartPoleShouldStepAsTheClassicEquationsByHand()
    {
        final CartPole env = new CartPole(1, 200, 0);
        env.set(0, 0, 0, 0, 0);
        assertTrue(!env.step(0, 1));
        // temp = 10/1.1; thetaAcc = -temp / (0.5 (4/3 - 0.1/1.1)); xAcc = temp - 0.05 thetaAcc / 1.1
        final double temp = 10 / 1.1;
        final double thetaAcc = -temp / (0.5 * (4.0 / 3.0 - 0.1 / 1.1));
        final double xAcc = temp - 0.05 * thetaAcc / 1.1;
        assertEquals(0.0, env.state(0, 0), 0.0);
        assertEquals(0.02 * xAcc, env.state(0, 1), 1e-12);
        assertEquals(0.0, env.state(0, 2), 0.0);
        assertEquals(0.02 * thetaAcc, env.state(0, 3), 1e-12);
        assertEquals(0.195122, env.state(0, 1), 1e-6);
        assertEquals(-0.292683, env.state(0, 3), 1e-6);
        env.set(0, 2.39, 1.0, 0, 0);
        assertTrue(env.step(0, 1), "x passes 2.4: terminal");
    }

    @Test
    void shouldSolveCartPoleWithTheDefaultConfig() throws Exception
    {
        final Config user = Config.empty().with("exp_name", dir.resolve("run").toString())
            .with("pipeline.max_env_step", 8000L).with("pipeline.warmup_updates", 20L);
        final DqnPipeline.Summary summary = new DqnPipeline(user).run(p -> { }, java.util.Map.of());
        assertTrue(summary.solved(), "best eval return " + summary.bestEvalReturn() + " after " + summary.envSteps());
        assertTrue(Files.isRegularFile(dir.resolve("run/ckpt/" + DqnPipeline.BEST_CHECKPOINT)));
        assertTrue(Files.readString(dir.resolve("run/summary.json")).contains("\"solved\" : true"));
    }
}
