import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistInfo;
import org.ding4j.hook.HookContext;
import org.ding4j.hook.HookPosition;
import org.ding4j.hook.LearnerHook;
import org.ding4j.learner.BaseLearner;
import org.ding4j.learner.TrainingLoop;
import org.ding4j.policy.LogSink;
import org.ding4j.policy.Policy;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedAdam;
import org.ding4j.torch.Mlp;
import org.ding4j.torch.Threads;

/** ding4j linked into an application: its own policy, the learner's run, its own hook, a checkpoint saved and loaded. */
public final class EmbeddedTraining
{
    /** Learns y = x[0] with a 4-32-1 MLP; a batch is the seed its 32 samples are drawn from. */
    static final class Regression implements Policy<Long>, AutoCloseable
    {
        private final Mlp net = Mlp.of(4, 32, 1);
        private final FlatParameters params = FlatParameters.of(net.module());
        private final FusedAdam adam = new FusedAdam(params, AdamConfig.adam(1e-2));
        private int loss;

        @Override public void registerLogVars(final LogSink sink) { loss = sink.register("total_loss"); }

        @Override public void forward(final Long seed, final LogSink sink)
        {
            try (PointerScope scope = new PointerScope())    // the update's temporaries die here
            {
                torch.manual_seed(seed);
                final Tensor x = torch.randn(32, 4);
                params.zeroGrad();
                final Tensor mse = torch.mse_loss(net.forward(x), x.narrow(1, 0, 1));
                mse.backward();
                adam.step();
                sink.put(loss, mse.item_double());
            }
        }

        @Override public List<String> monitorVars() { return List.of("total_loss"); }
        @Override public int batchSize() { return 1; }
        @Override public Map<String, Object> stateDict() { return Map.of("model", params.stateDict(), "optimizer", adam.stateDict()); }
        @SuppressWarnings("unchecked")
        @Override public void loadStateDict(final Map<String, Object> state)
        {
            params.loadStateDict((Map<String, Object>)state.get("model"), true);
            adam.loadStateDict((Map<String, Object>)state.get("optimizer"));
        }
        @Override public void close() { adam.close(); params.close(); net.close(); }
    }

    public static void main(final String[] args)
    {
        Threads.configure();    // 1 libtorch thread, 1 OpenBLAS thread: see the README
        final String exp = args.length > 0 ? args[0] : "embedded_run";
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=50"));
        final long[] next = {0};
        try (Regression policy = new Regression();
            BaseLearner<Long> learner = new BaseLearner<>(cfg, policy, null, DistInfo.single(), exp, "learner"))
        {
            final int priority = 100;    // after the built-in hooks (log_show runs at 20); lower runs first
            learner.registerHook(new LearnerHook("print_loss", priority, HookPosition.AFTER_ITER)
            {
                @Override public void call(final HookContext ctx)
                {
                    if (0 == ctx.lastIter() % 100)
                    {
                        System.out.printf("update %d loss %.5f%n", ctx.lastIter(), ctx.log().buffer().scalar().get("total_loss"));
                    }
                }
            });
            // run() is the learner's lifecycle: before_run, updates, after_run (saves iteration_300); stop() from any
            // thread ends it after the update in flight.
            System.out.println("run " + learner.run(new TrainingLoop()
            {
                @Override public boolean prepare() { return next[0] < 300; }
                @Override public void update() { learner.train(next[0]++); }
            }));
        }
        try (Regression policy = new Regression();
            BaseLearner<Long> learner = new BaseLearner<>(cfg, policy, null, DistInfo.single(), exp, "resumed"))
        {
            final Path file = Path.of(exp, "ckpt", "iteration_300.pth.tar");
            learner.checkpoints().load(file);
            System.out.println("loaded " + file + " at update " + learner.trainIter());
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
