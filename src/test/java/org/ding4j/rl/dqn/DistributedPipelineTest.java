package org.ding4j.rl.dqn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.learner.BaseLearner;
import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The main job on 2 real ranks (two JVMs running {@code ding4j train} with torchrun's environment, Gloo over
 * loopback), each in its own working folder so that what rank 1 would write is visible.
 */
class DistributedPipelineTest
{
    private static final Pattern END = Pattern.compile("^(solved|not solved|interrupted) after (\\d+) env steps and "
        + "(\\d+) updates");

    @TempDir
    Path dir;

    @Test
    void twoRanksShouldSolveInLockstepWithRankZeroWriting() throws Exception
    {
        final List<ChildJvm> ranks = launch();
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(240), rank::output);
        }
        final Matcher end0 = end(ranks.get(0));
        final Matcher end1 = end(ranks.get(1));
        assertEquals("solved", end0.group(1), ranks.get(0)::output);
        // Same averaged gradients, same nets, same evaluations: both ranks end after the same update.
        assertEquals(end0.group(2) + "/" + end0.group(3), end1.group(2) + "/" + end1.group(3));
        final JsonNode summary = new ObjectMapper().readTree(dir.resolve("r0/ddp/summary.json").toFile());
        assertEquals(2, summary.get("world_size").asInt());
        assertEquals(2 * summary.get("env_steps").asLong(), summary.get("env_steps_all_ranks").asLong());
        assertTrue(Files.isRegularFile(dir.resolve("r0/ddp/ckpt/ckpt_best.pth.tar")));
        assertFalse(Files.exists(dir.resolve("r1/ddp/ckpt")), "only rank 0 writes checkpoints");
        assertFalse(Files.exists(dir.resolve("r1/ddp/summary.json")), "only rank 0 writes the summary");
    }

    /**
     * TD3 and SAC on 2 ranks: every optimizer's gradients averaged, so both ranks end at the same update with the
     * same evaluation return (the same nets on the same seeded starts), and rank 0 alone writes.
     */
    @ParameterizedTest
    @ValueSource(strings = {"td3", "sac"})
    void twoRanksOfTd3OrSacShouldTrainOneJobInLockstep(final String algorithm) throws Exception
    {
        final List<ChildJvm> ranks = launch("--config", Path.of("examples/pendulum_" + algorithm + ".yaml")
            .toAbsolutePath().toString(), "--set", "pipeline.max_train_iter=200", "--set",
            "policy.random_collect_size=200");
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(240), rank::output);
        }
        final String end0 = end(ranks.get(0)).group();
        assertEquals("not solved after", end0.substring(0, "not solved after".length()), ranks.get(0)::output);
        final String line0 = ranks.get(0).firstLine(line -> END.matcher(line).find());
        final String line1 = ranks.get(1).firstLine(line -> END.matcher(line).find());
        // The whole line: env steps, updates, best evaluation return, all the same.
        assertEquals(line0, line1);
        assertTrue(line0.contains("and 200 updates"), line0);
        final JsonNode summary = new ObjectMapper().readTree(dir.resolve("r0/ddp/summary.json").toFile());
        assertEquals(2, summary.get("world_size").asInt());
        assertEquals(algorithm, summary.get("algorithm").asText());
        assertTrue(Files.isRegularFile(dir.resolve("r0/ddp/ckpt/ckpt_best.pth.tar")));
        assertFalse(Files.exists(dir.resolve("r1/ddp/ckpt")), "only rank 0 writes checkpoints");
        assertFalse(Files.exists(dir.resolve("r1/ddp/summary.json")), "only rank 0 writes the summary");
    }

    /**
     * DQN and PPO on libtorch autograd ({@code fused_update: false}) on 2 ranks: their gradients go through c10d's
     * Reducer during backward (PPO's minibatch by minibatch); PPO's fused update stops between each minibatch's
     * backward and its step for the all-reduce. Every way, both ranks end on the same line (same averaged gradients,
     * same nets, same evaluations).
     */
    @ParameterizedTest
    @ValueSource(strings = {"dqn", "ppo", "ppo-fused"})
    void twoRanksShouldTrainOneJobInLockstepOnTheReducerOrBetweenTheFusedStages(final String algorithm)
        throws Exception
    {
        final List<ChildJvm> ranks = "dqn".equals(algorithm)
            ? launch("--set", "policy.learn.fused_update=false", "--set", "pipeline.max_train_iter=300")
            : launch("--config", Path.of("examples/cartpole_ppo.yaml").toAbsolutePath().toString(), "--set",
                "pipeline.max_train_iter=64", "--set", "env.stop_value=1000", "--set",
                "policy.learn.fused_update=" + "ppo-fused".equals(algorithm));
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(240), rank::output);
        }
        final String line0 = ranks.get(0).firstLine(line -> END.matcher(line).find());
        assertEquals(line0, ranks.get(1).firstLine(line -> END.matcher(line).find()));
        final JsonNode summary = new ObjectMapper().readTree(dir.resolve("r0/ddp/summary.json").toFile());
        assertEquals(2, summary.get("world_size").asInt());
        assertEquals("ppo-fused".equals(algorithm) ? "gradient_sync" : "reducer",
            summary.get("gradient_reduction").asText());
    }

    @Test
    void aSignalToOneRankShouldStopBothAtTheSameUpdateAndSaveTheInterruptCheckpoint() throws Exception
    {
        // A stop value no episode reaches: only the signal ends the run.
        final List<ChildJvm> ranks = launch("--set", "env.stop_value=1000", "--set", "pipeline.max_env_step=100000000");
        assertTrue(ranks.get(0).reached.await(240, TimeUnit.SECONDS), ranks.get(0)::output);
        assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(ranks.get(1).process.pid())).start()
            .waitFor());
        for (final ChildJvm rank : ranks)
        {
            assertEquals(0, rank.await(120), rank::output);
        }
        final Matcher end0 = end(ranks.get(0));
        final Matcher end1 = end(ranks.get(1));
        assertEquals("interrupted", end0.group(1), ranks.get(0)::output);
        assertEquals("interrupted", end1.group(1), ranks.get(1)::output);
        assertEquals(end0.group(3), end1.group(3), "both ranks stop after the same update");
        final Path interrupt = dir.resolve("r0/ddp/ckpt/" + BaseLearner.INTERRUPT_CHECKPOINT);
        try (PointerScope scope = new PointerScope())
        {
            final Map<String, Object> state = new TorchCheckpointIO().read(interrupt);
            assertEquals(Long.parseLong(end0.group(3)), ((Number)state.get("last_iter")).longValue());
            assertEquals(Long.parseLong(end0.group(2)), ((Number)state.get("last_step")).longValue());
        }
        assertTrue(new ObjectMapper().readTree(dir.resolve("r0/ddp/summary.json").toFile()).get("interrupted")
            .asBoolean());
    }

    /**
     * Under torchrun's static rendezvous its agent hosts the store at MASTER_ADDR:MASTER_PORT and tells its workers
     * so (TORCHELASTIC_USE_AGENT_STORE=True): here the test hosts the store as the agent does, and two ranks with
     * torchrun's whole environment rendezvous on it as clients, under the agent's prefix for the attempt, and train
     * one job (rank 0 once tried to host a second store on the agent's port).
     */
    @Test
    void ranksShouldRendezvousOnTorchrunsAgentStore() throws Exception
    {
        final int port = ChildJvm.freePort();
        org.ding4j.torch.Threads.configure();
        try (org.bytedeco.pytorch.TCPStore agent = new org.bytedeco.pytorch.TCPStore("127.0.0.1",
            new org.bytedeco.pytorch.TCPStoreOptions().port((short)port).isServer(true).waitWorkers(false)
                .timeout(new org.bytedeco.javacpp.chrono.Milliseconds(120_000))))
        {
            final List<ChildJvm> ranks = launch(port, Map.of("TORCHELASTIC_USE_AGENT_STORE", "True",
                "TORCHELASTIC_RESTART_COUNT", "0", "TORCHELASTIC_MAX_RESTARTS", "0", "TORCHELASTIC_RUN_ID", "agent-job",
                "LOCAL_WORLD_SIZE", "2", "GROUP_RANK", "0"), "--set", "pipeline.max_train_iter=100");
            for (final ChildJvm rank : ranks)
            {
                assertEquals(0, rank.await(240), rank::output);
            }
            assertEquals(end(ranks.get(0)).group(), end(ranks.get(1)).group());
            // The ranks met under the agent's prefix for attempt 0, as torch.distributed's workers do.
            try (org.bytedeco.pytorch.ByteVector job = agent.get("/worker/attempt_0/ding4j/job"))
            {
                assertTrue(new String(job.get(), java.nio.charset.StandardCharsets.UTF_8).startsWith("agent-job\n"));
            }
        }
        final JsonNode summary = new ObjectMapper().readTree(dir.resolve("r0/ddp/summary.json").toFile());
        assertEquals(2, summary.get("world_size").asInt());
    }

    private List<ChildJvm> launch(final String... extra) throws IOException
    {
        return launch(ChildJvm.freePort(), Map.of(), extra);
    }

    private List<ChildJvm> launch(final int port, final Map<String, String> torchrun, final String... extra)
        throws IOException
    {
        final List<ChildJvm> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++)
        {
            final Path cwd = Files.createDirectories(dir.resolve("r" + r));
            final List<String> command = ChildJvm.javaCommand(dir, "org.ding4j.cli.Main");
            command.addAll(List.of("train", "--set", "exp_name=ddp"));
            command.addAll(List.of(extra));
            final ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile());
            final Map<String, String> env = builder.environment();
            env.put("RANK", Integer.toString(r));
            env.put("WORLD_SIZE", "2");
            env.put("LOCAL_RANK", Integer.toString(r));
            env.put("MASTER_ADDR", "127.0.0.1");
            env.put("MASTER_PORT", Integer.toString(port));
            env.put("OMP_WAIT_POLICY", "PASSIVE");
            env.putAll(torchrun);
            // Rank 0's first progress line comes with its first evaluation.
            ranks.add(ChildJvm.start(r, builder, line -> line.startsWith("env steps ")));
        }
        return ranks;
    }

    private static Matcher end(final ChildJvm rank)
    {
        final Matcher matcher = END.matcher(rank.firstLine(line -> END.matcher(line).find()));
        assertTrue(matcher.find());
        return matcher;
    }
}
