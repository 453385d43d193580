import org.ding4j.config.Config;
import org.ding4j.rl.OffPolicyPipeline;
import org.ding4j.rl.pipeline.OffPolicyRun;

/**
 * SAC on a user's own environment ({@link Docking}, a thrust in [-1, 1]) through ding4j's public API: the embedded
 * SAC config (examples/pendulum_sac.yaml's settings) with the env, its observation width and a stop value. TD3 is
 * the same with {@code policy.type: td3}. The README shows this class from its declaration on (a test keeps them equal).
 * Run: {@code java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp CLASSES:DING4J TrainDockingSac [DIR]
 * [MAX_ENV_STEPS]}.
 */
public final class TrainDockingSac
{
    private TrainDockingSac()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Config config = Config.empty()
            .with("policy.type", "sac")                      // dqn (Discrete), td3 or sac (bounded Box), ppo (both)
            .with("exp_name", args.length > 0 ? args[0] : "docking_sac")             // the output folder
            .with("env.type", Docking.class.getName())       // your Env class, on the class path
            .with("env.stop_value", 0.0)                     // the mean evaluation return that solves it
            .with("policy.model.obs_shape", 2L)              // checked against the env's spaces
            .with("policy.model.action_shape", 1L)
            .with("pipeline.max_env_step", args.length > 1 ? Long.parseLong(args[1]) : 300_000L);
        final OffPolicyRun.Summary summary = new OffPolicyPipeline(config).run(
            p -> System.out.printf("env steps %6d | updates %5d | eval %7.1f (best %7.1f)%n", p.envSteps(),
                p.trainIter(), p.lastEvalReturn(), p.bestEvalReturn()));
        System.out.printf("SAC on Docking: %s after %d env steps, best eval return %.1f%n",
            summary.solved() ? "solved" : "not solved", summary.envSteps(), summary.bestEvalReturn());
    }
}
