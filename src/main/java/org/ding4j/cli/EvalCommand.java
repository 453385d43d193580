package org.ding4j.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.pipeline.EnvValues;
import org.ding4j.torch.Threads;

/**
 * {@code ding4j eval --ckpt FILE [--episodes N] [--seed N] [CONFIG] [--set ...]}: episodes of a checkpoint's
 * {@code model} on fresh random starts of the config's {@code env.type}, with the greedy (DQN) or deterministic (TD3,
 * SAC, PPO) action of its {@code policy.type}. The net's shape, its activation and the environment come from the
 * config: the one given, else the training run's {@code total_config.yaml} when the checkpoint lies in its
 * {@code ckpt/} folder (a Tanh net evaluated as a ReLU one would load without complaint: the shapes are the same),
 * else the embedded default.
 */
final class EvalCommand
{
    private static final int MAX_EPISODES = 100_000;

    private final Path ckpt;
    private final int episodes;
    private final long seed;
    private final Path config;
    private final List<String> overrides;
    private final PrintWriter out;

    private EvalCommand(final Cli.Args args)
    {
        ckpt = args.path("--ckpt");
        episodes = args.integer("--episodes");
        seed = args.longValue("--seed");
        config = args.pathAt(0);
        overrides = args.values("--set");
        out = args.out();
    }

    /** @return the {@code eval} command's declaration */
    static Cli.Command command()
    {
        return new Cli.Command("eval", "Evaluate a checkpoint greedily on fresh random starts of its env.type (DQN, "
            + "TD3, SAC or PPO).")
            .optionalParameter("CONFIG", "the training config (default: the run's total_config.yaml beside ckpt/, "
                + "else the embedded one)")
            .requiredOption("--ckpt", "FILE", "a checkpoint with a 'model' dict")
            .option("--episodes", "N", "episodes to run", "100")
            .option("--seed", "N", "the start states' seed", "12345")
            .repeatableOption("--set", "KEY=VALUE", "override one config key")
            .action(args -> new EvalCommand(args).call());
    }

    private int call() throws Exception
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
        // The run's own config, where a run writes it: beside the ckpt/ folder the file is in (any other folder's
        // total_config.yaml may be another run's, of another algorithm).
        final Path folder = ckpt.toAbsolutePath().normalize().getParent();
        final Path runConfig = null != folder && null != folder.getFileName()
            && "ckpt".equals(folder.getFileName().toString()) ? folder.resolveSibling("total_config.yaml") : null;
        final Path source = null != config ? config
            : null != runConfig && Files.isRegularFile(runConfig) ? runConfig : null;
        final Config user = ConfigFiles.override(null == source ? Config.empty() : ConfigFiles.load(source), overrides);
        final OffPolicyPipeline pipeline = OffPolicyPipeline.forEvaluation(user);
        pipeline.requireEvaluationWithinBounds("--episodes", episodes);
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
            // Where no config was found the hint goes first: a key list can run to hundreds of characters.
            throw new IllegalArgumentException("checkpoint " + ckpt + ": "
                + (null == source ? "no CONFIG given and no total_config.yaml beside its ckpt/ folder, so the embedded "
                + "defaults of policy.type " + pipeline.algorithm().name() + " were used (give the training config): "
                : "") + ex.getMessage(), ex);
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
        out.println(new ObjectMapper().writeValueAsString(json));
        out.flush();
    }
}
