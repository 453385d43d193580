package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.rl.dqn.QNetwork;
import org.ding4j.rl.envs.CartPole;
import org.ding4j.torch.Activation;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ding4j eval} takes the net's shape and activation from the training run's {@code total_config.yaml} beside
 * the checkpoint's folder: a Tanh net of width 8 saved where a run would save it evaluates without a config argument
 * (the embedded config's 128-128-64 ReLU net would not even load it).
 */
@Tag("native")
class EvalCommandTest
{
    @TempDir
    Path dir;

    @Test
    void shouldUseTheRunsConfigBesideTheCheckpoint() throws Exception
    {
        Threads.configure();
        final Path ckpt = dir.resolve("run").resolve("ckpt").resolve("ckpt_best.pth.tar");
        Files.createDirectories(ckpt.getParent());
        Files.writeString(dir.resolve("run").resolve("total_config.yaml"), String.join("\n",
            "policy:", "  model:", "    encoder_hidden_size_list: [8]", "    dueling: false", "    activation: tanh",
            ""));
        torch.manual_seed(1);
        try (QNetwork net = new QNetwork(CartPole.OBS, CartPole.ACTIONS, new long[] {8}, false, Activation.TANH);
            FlatParameters params = FlatParameters.of(net.module()))
        {
            new TorchCheckpointIO().write(ckpt, Map.of("model", params.stateDict()));
        }
        // A quote and a newline in the file name: the output stays one valid JSON object that names it.
        final Path odd = Files.copy(ckpt, ckpt.resolveSibling("a\"b\nc.pth.tar"));
        final StringWriter out = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setOut(new PrintWriter(out));
        assertEquals(0, cli.execute("eval", "--ckpt", odd.toString(), "--episodes", "2"), out.toString());
        final JsonNode result = new ObjectMapper().readTree(out.toString());
        assertEquals(odd.toString(), result.get("checkpoint").asText());
        assertEquals(dir.resolve("run").resolve("total_config.yaml").toAbsolutePath().toString(),
            result.get("config").asText());
        assertEquals(2, result.get("episodes").asInt());
        assertTrue(result.get("mean_return").asDouble() >= 1, result.toString());
        assertEquals("dqn", result.get("algorithm").asText());
        // TD3 and SAC run the episodes side by side, one env each: 7e8 of them ran out of memory (5.9 GB, then OOM).
        final StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        assertEquals(Main.BAD_INPUT, cli.execute("eval", "--ckpt", odd.toString(), "--episodes", "700000000"));
        assertTrue(err.toString().contains("--episodes: expected an integer in [1, 100000], got 700000000"),
            err::toString);
        // Episodes as long as the config allows: 1e10 env steps, hours, refused before the checkpoint is read.
        assertEquals(Main.BAD_INPUT, cli.execute("eval", "--ckpt", odd.toString(), "--episodes", "100000", "--set",
            "env.max_episode_steps=100000"));
        assertTrue(err.toString().contains("--episodes: expected episodes x env.max_episode_steps <= 100000000 (an "
            + "evaluation runs every episode to its end), got 100000 x 100000"), err::toString);
        // An environment that returns a NaN reward fails the evaluation (exit 1) naming the reward: the environment's
        // fault, not a bad checkpoint (exit 2).
        final StringWriter envErr = new StringWriter();
        cli.setErr(new PrintWriter(envErr, true));
        assertEquals(1, cli.execute("eval", "--ckpt", ckpt.toString(), "--episodes", "2", "--set",
            "env.type=org.ding4j.rl.dqn.DqnTrainingTest$NanRewardCartPole"), envErr::toString);
        assertTrue(envErr.toString().startsWith(
            "ding4j: reward: expected a finite value from the environment, got NaN"), envErr::toString);
        final StringWriter missingErr = new StringWriter();
        cli.setErr(new PrintWriter(missingErr, true));
        assertEquals(Main.BAD_INPUT, cli.execute("eval", "--ckpt", dir.resolve("nope.pth.tar").toString()));
        assertTrue(missingErr.toString().contains("--ckpt: " + dir.resolve("nope.pth.tar") + " does not exist"),
            missingErr::toString);
        // Out of its run's folder the checkpoint meets the embedded defaults, which the message says first.
        final Path loose = Files.copy(ckpt, dir.resolve("loose.pth.tar"));
        final StringWriter looseErr = new StringWriter();
        cli.setErr(new PrintWriter(looseErr, true));
        assertEquals(Main.BAD_INPUT, cli.execute("eval", "--ckpt", loose.toString()));
        assertTrue(looseErr.toString().startsWith("ding4j: checkpoint " + loose + ": no CONFIG given and no "
            + "total_config.yaml beside its ckpt/ folder, so the embedded defaults of policy.type dqn were used (give "
            + "the training config): "), looseErr::toString);
        // Not a checkpoint at all: bad input as well.
        final Path garbage = Files.write(dir.resolve("garbage.pth.tar"), new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        assertEquals(Main.BAD_INPUT, cli.execute("eval", "--ckpt", garbage.toString()));
    }
}
