package org.ding4j.rl.ac;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.env.ResumableRandom;
import org.ding4j.policy.DivergedException;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.AdamConfig;
import org.ding4j.torch.FlatParameters;
import org.ding4j.torch.FusedActorCritic;
import org.ding4j.torch.FusedAdam;

/**
 * SAC (Haarnoja et al. 2018) as DI-engine's {@code sac} policy learns it (twin critics, no value network). The
 * actor outputs a mean and a log standard deviation per action entry (clamped to [-20, 2]); an action is
 * {@code tanh(mu + sigma * eps)} with {@code eps ~ N(0, 1)}, its log-probability the Gaussian's less
 * {@code sum log(1 - a^2 + 1e-6)} (the tanh correction). One update:
 * <pre>
 *   y      = r + gamma * notDone * (min(Q1_target, Q2_target)(s', a') - alpha * log pi(a'|s'))   a' ~ pi(s')
 *   critic = mse(Q1(s, a), y) + mse(Q2(s, a), y)                                              then Adam
 *   policy = mean(alpha * log pi(a~|s) - min(Q1, Q2)(s, a~))          a~ ~ pi(s), reparameterised; then Adam
 *   alpha  = -mean(log_alpha * (log pi(a~|s) + target_entropy))       (learned; target entropy -action width)
 *   Q_target moved by Polyak tau
 * </pre>
 * Both {@code eps} come from the policy's noise stream (in the state dict). Log vars {@code cur_lr_q, cur_lr_p,
 * critic_loss, policy_loss, alpha_loss, alpha, q_value, target_q_value, entropy}. The state dict: {@code model},
 * {@code target_model}, {@code optimizer_q}, {@code optimizer_policy}, {@code optimizer_alpha} and
 * {@code log_alpha}.
 */
public final class SacPolicy extends ActorCritic
{
    /**
     * SAC's settings.
     *
     * @param nets      the nets and shared settings ({@code lrActor} is DI-engine's {@code learning_rate_policy},
     *                  {@code lrCritic} its {@code learning_rate_q})
     * @param autoAlpha whether alpha is learned ({@code learn.auto_alpha})
     * @param alpha     the initial (or fixed) temperature ({@code learn.alpha})
     * @param lrAlpha   the temperature's Adam learning rate ({@code learn.learning_rate_alpha})
     */
    public record Settings(Nets nets, boolean autoAlpha, double alpha, double lrAlpha)
    {
        /** Checks the values; a wrong one is named with the rule it breaks. */
        public Settings
        {
            Objects.requireNonNull(nets, "nets");
            require(alpha > 0 && Double.isFinite(alpha), "learn.alpha", alpha, "a finite number > 0");
            require(lrAlpha > 0, "learn.learning_rate_alpha", lrAlpha, "> 0");
        }
    }

    private static final double LOG_SIGMA_MIN = -20;
    private static final double LOG_SIGMA_MAX = 2;
    private static final double TANH_EPS = 1e-6;
    private static final double HALF_LOG_2PI = 0.5 * Math.log(2 * Math.PI);

    private final Settings settings;
    private final float[] epsStage;
    private final Tensor epsNext;
    private final FloatPointer epsNextData;
    private final Tensor eps;
    private final FloatPointer epsData;
    private final Tensor logAlphaLeaf;
    private final FlatParameters logAlpha;
    private final FusedAdam alphaOptimizer;
    private final ScalarOptional logSigmaMin;
    private final ScalarOptional logSigmaMax;
    private final Scalar minusHalf;
    private final Scalar halfLog2Pi;
    private final Scalar one;
    private final Scalar tanhEps;
    private final Scalar targetEntropy;
    private int curLrQ;
    private int curLrP;
    private int criticLoss;
    private int policyLoss;
    private int alphaLoss;
    private int alphaVar;
    private int qValue;
    private int targetQValue;
    private int entropy;
    private double lastAlpha;
    private double lastCriticLoss;
    private double lastQ;
    private double lastTargetQ;
    private double lastPolicyLoss;
    private double lastAlphaLoss;
    private double lastLogProb;

    /**
     * Builds the nets from libtorch's global generator (seed it first).
     *
     * @param settings  the hyper-parameters
     * @param noiseSeed the sampling noise stream's seed
     */
    public SacPolicy(final Settings settings, final long noiseSeed)
    {
        super("SacPolicy", settings.nets(), 2 * settings.nets().action(), false, noiseSeed);
        this.settings = settings;
        epsStage = new float[nets.batchSize() * nets.action()];
        epsNext = natives.own(ControlBatch.floats(nets.batchSize(), nets.action()));
        epsNextData = new FloatPointer(epsNext.data_ptr());
        eps = natives.own(ControlBatch.floats(nets.batchSize(), nets.action()));
        epsData = new FloatPointer(eps.data_ptr());
        // The leaf autograd differentiates (the flat buffer's own view would not require grad).
        logAlphaLeaf = natives.own(torch.full(new long[] {1}, natives.own(new Scalar(Math.log(settings.alpha())))));
        logAlphaLeaf.requires_grad_(true);
        logAlpha = FlatParameters.of(List.of("log_alpha"), List.of(logAlphaLeaf));
        alphaOptimizer = new FusedAdam(logAlpha, AdamConfig.adam(settings.lrAlpha()));
        logSigmaMin = natives.own(new ScalarOptional(natives.own(new Scalar(LOG_SIGMA_MIN))));
        logSigmaMax = natives.own(new ScalarOptional(natives.own(new Scalar(LOG_SIGMA_MAX))));
        minusHalf = natives.own(new Scalar(-0.5));
        halfLog2Pi = natives.own(new Scalar(HALF_LOG_2PI));
        one = natives.own(new Scalar(1.0));
        tanhEps = natives.own(new Scalar(TANH_EPS));
        targetEntropy = natives.own(new Scalar((double)-nets.action()));
    }

    @Override
    public void registerLogVars(final LogSink sink)
    {
        curLrQ = sink.register("cur_lr_q");
        curLrP = sink.register("cur_lr_p");
        criticLoss = sink.register("critic_loss");
        policyLoss = sink.register("policy_loss");
        alphaLoss = sink.register("alpha_loss");
        alphaVar = sink.register("alpha");
        qValue = sink.register("q_value");
        targetQValue = sink.register("target_q_value");
        entropy = sink.register("entropy");
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr_q", "cur_lr_p", "critic_loss", "policy_loss", "alpha_loss", "alpha", "q_value",
            "target_q_value", "entropy");
    }

    /** @return the temperature now */
    public double alpha()
    {
        return Math.exp(logAlpha.group(0).values().item_double());
    }

    @Override
    public void forward(final ControlBatch batch, final LogSink sink)
    {
        check(batch);
        batch.upload();
        drawNoise(epsStage, epsNextData, 1.0, Double.POSITIVE_INFINITY);
        drawNoise(epsStage, epsData, 1.0, Double.POSITIVE_INFINITY);
        if (null != fused)
        {
            fused.update(binding(batch, epsNext, eps), true);
            lastAlpha = fused.alpha();
            lastCriticLoss = fused.criticLoss();
            lastQ = fused.qMean();
            lastTargetQ = fused.targetQMean();
            lastPolicyLoss = fused.actorLoss();
            lastAlphaLoss = fused.alphaLoss();
            lastLogProb = fused.logProbMean();
        }
        else
        {
            eagerStep(batch);
            critic.polyak(tau);
        }
        DivergedException.requireFinite("SAC", "critic_loss", lastCriticLoss);
        DivergedException.requireFinite("SAC", "policy_loss", lastPolicyLoss);
        updates++;
        sink.put(curLrQ, critic.optimizer().lr());
        sink.put(curLrP, actor.optimizer().lr());
        sink.put(criticLoss, lastCriticLoss);
        sink.put(policyLoss, lastPolicyLoss);
        sink.put(alphaLoss, lastAlphaLoss);
        sink.put(alphaVar, lastAlpha);
        sink.put(qValue, lastQ);
        sink.put(targetQValue, lastTargetQ);
        sink.put(entropy, -lastLogProb);
    }

    /** libtorch autograd, operator by operator: the fused update's reference (the caller moves the targets). */
    private void eagerStep(final ControlBatch batch)
    {
        lastAlpha = alpha();
        final Scalar alphaScalar = new Scalar(lastAlpha);
        try (PointerScope scope = new PointerScope())
        {
            final Tensor next;
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                final Tensor[] sample = sample(batch.nextObsTensor(), epsNext);
                next = targetMin(batch.nextObsTensor(), sample[0]).sub(sample[1], alphaScalar);
                lastTargetQ = next.mean().item_double();
            }
            final double[] criticOut = criticStep(batch, tdTarget(batch, next));
            lastCriticLoss = criticOut[0];
            lastQ = criticOut[1];
            actor.params().zeroGrad();
            final Tensor[] sample = sample(batch.obsTensor(), eps);
            final Tensor minQ = torch.minimum(q(0, batch.obsTensor(), sample[0]), q(1, batch.obsTensor(), sample[0]));
            final Tensor loss = sample[1].mul(alphaScalar).sub(minQ).mean();
            loss.backward();
            actor.optimizer().step();
            lastPolicyLoss = loss.item_double();
            final Tensor logProb = sample[1].detach();
            lastLogProb = logProb.mean().item_double();
            lastAlphaLoss = 0;
            if (settings.autoAlpha())
            {
                logAlpha.zeroGrad();
                final Tensor alphaTerm = logAlphaLeaf.mul(logProb.add(targetEntropy)).mean().neg();
                alphaTerm.backward();
                alphaOptimizer.step();
                lastAlphaLoss = alphaTerm.item_double();
            }
        }
        finally
        {
            alphaScalar.close();
        }
    }

    @Override
    FusedActorCritic newFused()
    {
        return new FusedActorCritic(layout(FusedActorCritic.Kind.SAC, -nets.action()), actor.params(), null,
            actor.optimizer(), critic.params(), critic.targetParams(), critic.optimizer(), logAlpha,
            settings.autoAlpha() ? alphaOptimizer : null);
    }
    /**
     * A reparameterised sample of the squashed Gaussian.
     *
     * @return {@code {action [B, act], log pi [B]}}
     */
    private Tensor[] sample(final Tensor obs, final Tensor noise)
    {
        final Tensor out = actor.net(0).forward(obs);
        final long width = nets.action();
        final Tensor mu = out.narrow(1, 0, width);
        final Tensor logSigma = out.narrow(1, width, width).clamp(logSigmaMin, logSigmaMax);
        final Tensor action = mu.add(logSigma.exp().mul(noise)).tanh();
        // log N(u; mu, sigma) = -eps^2 / 2 - log sigma - log(2 pi) / 2, with u - mu = sigma * eps exactly.
        final Tensor gaussian = noise.square().mul(minusHalf).sub(logSigma).sub(halfLog2Pi).sum(1);
        final Tensor correction = action.square().neg().add(one).add(tanhEps).log().sum(1);
        return new Tensor[] {action, gaussian.sub(correction)};
    }

    @Override
    public double action(final float[] raw, final int row, final int k, final ResumableRandom explore)
    {
        final double mu = raw[row + k];
        if (null == explore)
        {
            return Math.tanh(mu);
        }
        final double logSigma = Math.max(LOG_SIGMA_MIN, Math.min(LOG_SIGMA_MAX, raw[row + nets.action() + k]));
        return Math.tanh(mu + Math.exp(logSigma) * explore.nextGaussian());
    }

    @Override
    List<String> optimizerKeys()
    {
        return settings.autoAlpha() ? List.of("optimizer_q", "optimizer_policy", "optimizer_alpha")
            : List.of("optimizer_q", "optimizer_policy");
    }

    @Override
    public List<FusedAdam> optimizers()
    {
        return settings.autoAlpha() ? List.of(critic.optimizer(), actor.optimizer(), alphaOptimizer)
            : List.of(critic.optimizer(), actor.optimizer());
    }

    @Override
    public Map<String, Object> stateDict()
    {
        final Map<String, Object> state = super.stateDict();
        state.put("log_alpha", logAlpha.stateDict().get("log_alpha"));
        return state;
    }

    @Override
    public void loadStateDict(final Map<String, Object> state)
    {
        requireSameModel(state);
        if (!(state.get("log_alpha") instanceof Tensor))
        {
            throw new IllegalArgumentException("SacPolicy state dict: 'log_alpha' is missing or not a tensor");
        }
        super.loadStateDict(state);
        logAlpha.loadStateDict(Map.of("log_alpha", state.get("log_alpha")), true);
    }

    /** @return the hyper-parameters */
    public Settings settings()
    {
        return settings;
    }

    @Override
    public String info()
    {
        return "SacPolicy(actor " + actor.params().numel() + ", twin critic " + critic.params().numel()
            + " parameters, " + (settings.autoAlpha() ? "learned" : "fixed") + " alpha)";
    }

    @Override
    void closeOwn()
    {
        alphaOptimizer.close();
        logAlpha.close();
    }
}
