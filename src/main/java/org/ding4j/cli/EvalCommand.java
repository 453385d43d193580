package org.ding4j.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.example.OffPolicyPipeline;
import org.ding4j.example.pipeline.EnvValues;
import org.ding4j.torch.Threads;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ding4j eval --ckpt FILE [--episodes N] [--seed N] [CONFIG] [--set ...]}: episodes of a checkpoint's
 * {@code model} on fresh random starts of the config's {@code env.type}, with the greedy (DQN) or deterministic (TD3,
 * SAC, PPO) action of its {@code policy.type}. The net's shape, its activation and the environment come from the
 * config: the one given, else the training run's {@code total_config.yaml} when the checkpoint lies in its
 * {@code ckpt/} folder (a Tanh net evaluated as a ReLU one would load without complaint: the shapes are the same),
 * else the embedded default.
 */
@Command(name = "eval", mixinStandardHelpOptions = true,
    description = "Evaluate a checkpoint greedily on fresh random starts of its env.type (DQN, TD3, SAC or PPO).")
final class EvalCommand implements Callable<Integer>
{
    private static final int MAX_EPISODES = 100_000;

    @Option(names = "--ckpt", required = true, paramLabel = "FILE", description = "a checkpoint with a 'model' dict")
    private Path ckpt;

    @Option(names = "--episodes", paramLabel = "N", defaultValue = "100",
        description = "episodes to run (default ${DEFAULT-VALUE})")
    private int episodes;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "12345",
        description = "the start states' seed (default ${DEFAULT-VALUE})")
    private long seed;

    @Parameters(index = "0", arity = "0..1", paramLabel = "CONFIG",
        description = "the training config (default: the run's total_config.yaml beside ckpt/, else the embedded one)")
    private Path config;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "override one config key")
    private List<String> overrides = new ArrayList<>();

    @Spec
    private picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        if (episodes < 1 || episodes > MAX_EPISODES)
        {
            // TD3 and SAC run the episodes side by side, one env each: 7e8 of them ran out of memory.
            throw new IllegalArgumentException("--episodes: expected an integer in [1, " + MAX_EPISODES + "], got "
                + episodes);
        }
        if (!Files.exists(ckpt))
        {
            throw new IllegalArgumentException("--ckpt: " + ckpt + " does not exist");
        }
        final Path runConfig = ckpt.toAbsolutePath().getParent().resolveSibling("total_config.yaml");
        final Path source = null != config ? config : Files.isRegularFile(runConfig) ? runConfig : null;
        final Config user = ConfigFiles.override(null == source ? Config.empty() : ConfigFiles.load(source), overrides);
        final OffPolicyPipeline pipeline = OffPolicyPipeline.forEvaluation(user);
        Threads.configure();
        final double[] r;
        try (PointerScope scope = new PointerScope())
        {
            r = pipeline.evaluate(new TorchCheckpointIO().read(ckpt), episodes, seed);
        }
        catch (final EnvValues.NonFiniteValueException ex)
        {
            // The environment's fault, not the checkpoint's: a failure (exit 1), not bad input (exit 2).
            throw new IllegalStateException(ex.getMessage(), ex);
        }
        catch (final IllegalArgumentException ex)
        {
            // A checkpoint that does not fit the config: bad input, exit 2.
            throw new IllegalArgumentException("checkpoint " + ckpt + ": " + ex.getMessage()
                + (null == source ? " (no CONFIG given and no total_config.yaml beside its ckpt/ folder: the embedded "
                + "defaults of policy.type " + pipeline.algorithm().name() + " were used)" : ""), ex);
        }
        catch (final org.ding4j.checkpoint.CorruptCheckpointException ex)
        {
            // Not a checkpoint (damaged, truncated, the legacy format): bad input too.
            throw new IllegalArgumentException(ex.getMessage(), ex);
        }
        final Map<String, Object> json = new LinkedHashMap<>();
        json.put("checkpoint", ckpt.toString());
        json.put("config", null == source ? "embedded" : source.toString());
        json.put("algorithm", pipeline.algorithm().name());
        json.put("episodes", episodes);
        json.put("seed", seed);
        json.put("mean_return", r[0]);
        json.put("min_return", r[1]);
        json.put("max_return", r[2]);
        json.put("stop_value", pipeline.config().getDouble("env.stop_value"));
        print(json);
        return 0;
    }

    /** One line of JSON, escaped by Jackson (a path with a quote or a newline stays valid JSON). */
    private void print(final Map<String, Object> json) throws IOException
    {
        final PrintWriter out = spec.commandLine().getOut();
        out.println(new ObjectMapper().writeValueAsString(json));
        out.flush();
    }
}
