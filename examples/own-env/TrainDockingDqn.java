import java.nio.file.Path;

import org.ding4j.config.Config;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.pipeline.OffPolicyRun;

/**
 * DQN on a user's own environment ({@link Docking.Thrusters}) through ding4j's public API: the embedded DQN config
 * (DI-engine's CartPole settings) with the env, its spaces and a stop value; the rest is the pipeline's.
 * Run: {@code java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp CLASSES:DING4J TrainDockingDqn [DIR]
 * [MAX_ENV_STEPS]}.
 */
public final class TrainDockingDqn
{
    private TrainDockingDqn()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Config config = Config.empty()
            .with("exp_name", args.length > 0 ? args[0] : "docking_dqn")
            .with("env.type", Docking.Thrusters.class.getName())
            .with("env.stop_value", 0.0)
            .with("policy.model.obs_shape", 2L)
            .with("policy.model.action_shape", 3L)
            .with("pipeline.max_env_step", args.length > 1 ? Long.parseLong(args[1]) : 100_000L);
        // The folder it writes: exp_name, or a renewed one beside it when that holds an earlier run.
        final OffPolicyPipeline pipeline = new OffPolicyPipeline(config);
        final OffPolicyRun.Summary summary = pipeline.run(
            p -> System.out.printf("env steps %6d | updates %5d | eval %7.1f (best %7.1f)%n", p.envSteps(),
                p.trainIter(), p.lastEvalReturn(), p.bestEvalReturn()));
        System.out.printf("DQN on Docking: %s after %d env steps, best eval return %.1f; checkpoints in %s%n",
            summary.solved() ? "solved" : "not solved", summary.envSteps(), summary.bestEvalReturn(),
            Path.of(pipeline.config().getString("exp_name"), "ckpt"));
    }
}
