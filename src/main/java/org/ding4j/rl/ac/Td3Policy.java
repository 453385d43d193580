package org.ding4j.rl.ac;

import java.util.List;
import java.util.Objects;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarOptional;
import org.bytedeco.pytorch.Tensor;
import org.ding4j.env.ResumableRandom;
import org.ding4j.policy.DivergedException;
import org.ding4j.policy.LogSink;
import org.ding4j.torch.FusedActorCritic;
import org.ding4j.torch.FusedAdam;

/**
 * TD3 (Fujimoto et al. 2018) as DI-engine's {@code td3} policy learns it. One update on a {@link ControlBatch}:
 * <pre>
 *   a'      = clamp(tanh(actor_target(s')) + clamp(N(0, sigma), -c, c), -1, 1)   (target policy smoothing)
 *   y       = r + gamma * notDone * min(Q1_target(s', a'), Q2_target(s', a'))
 *   critic  = mse(Q1(s, a), y) + mse(Q2(s, a), y)                                  then Adam
 *   every actor_update_freq updates:
 *     actor = -mean(Q1(s, tanh(actor(s))))                                         then Adam
 *     actor_target, Q_target moved by Polyak tau
 * </pre>
 * The smoothing noise comes from the policy's own stream (in the state dict, so a resume continues it). Log vars
 * {@code cur_lr_actor, cur_lr_critic, critic_loss, actor_loss, q_value, target_q_value, policy_noise} (mean |noise|).
 * The state dict is DI-engine's: {@code model}, {@code target_model}, {@code optimizer_actor},
 * {@code optimizer_critic}.
 */
public final class Td3Policy extends ActorCritic
{
    /**
     * TD3's settings.
     *
     * @param nets            the nets and shared settings
     * @param actorUpdateFreq critic updates per actor (and target) update
     * @param noiseSigma      the target smoothing noise's standard deviation ({@code learn.noise_sigma})
     * @param noiseClip       the smoothing noise is clamped to [-clip, clip] ({@code learn.noise_range.max})
     * @param exploreSigma    the collector's Gaussian exploration noise ({@code collect.noise_sigma})
     */
    public record Settings(Nets nets, int actorUpdateFreq, double noiseSigma, double noiseClip, double exploreSigma)
    {
        /** Checks the values; a wrong one is named with the rule it breaks. */
        public Settings
        {
            Objects.requireNonNull(nets, "nets");
            require(actorUpdateFreq >= 1, "learn.actor_update_freq", actorUpdateFreq, ">= 1");
            require(noiseSigma >= 0, "learn.noise_sigma", noiseSigma, ">= 0");
            require(noiseClip >= 0, "learn.noise_range.max", noiseClip, ">= 0 (the smoothing noise clip)");
            require(exploreSigma >= 0, "collect.noise_sigma", exploreSigma, ">= 0");
        }
    }

    private final Settings settings;
    private final float[] noiseStage;
    private final Tensor noiseTensor;
    private final FloatPointer noiseData;
    private final ScalarOptional minusOne;
    private final ScalarOptional one;
    private int curLrActor;
    private int curLrCritic;
    private int criticLoss;
    private int actorLoss;
    private int qValue;
    private int targetQValue;
    private int policyNoise;
    private double lastActorLoss;
    private double lastCriticLoss;
    private double lastQ;
    private double lastTargetQ;

    /**
     * Builds the nets from libtorch's global generator (seed it first).
     *
     * @param settings  the hyper-parameters
     * @param noiseSeed the smoothing noise stream's seed
     */
    public Td3Policy(final Settings settings, final long noiseSeed)
    {
        super("Td3Policy", settings.nets(), settings.nets().action(), true, noiseSeed);
        this.settings = settings;
        noiseStage = new float[nets.batchSize() * nets.action()];
        noiseTensor = natives.own(ControlBatch.floats(nets.batchSize(), nets.action()));
        noiseData = new FloatPointer(noiseTensor.data_ptr());
        minusOne = natives.own(new ScalarOptional(natives.own(new Scalar(-1.0))));
        one = natives.own(new ScalarOptional(natives.own(new Scalar(1.0))));
    }

    @Override
    public void registerLogVars(final LogSink sink)
    {
        curLrActor = sink.register("cur_lr_actor");
        curLrCritic = sink.register("cur_lr_critic");
        criticLoss = sink.register("critic_loss");
        actorLoss = sink.register("actor_loss");
        qValue = sink.register("q_value");
        targetQValue = sink.register("target_q_value");
        policyNoise = sink.register("policy_noise");
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr_actor", "cur_lr_critic", "critic_loss", "actor_loss", "q_value", "target_q_value",
            "policy_noise");
    }

    @Override
    public void forward(final ControlBatch batch, final LogSink sink)
    {
        check(batch);
        batch.upload();
        drawNoise(noiseStage, noiseData, settings.noiseSigma(), settings.noiseClip());
        final boolean actorTurn = 0 == (updates + 1) % settings.actorUpdateFreq();
        if (null != fused)
        {
            fused.update(binding(batch, noiseTensor, null), actorTurn);
            lastCriticLoss = fused.criticLoss();
            lastQ = fused.qMean();
            lastTargetQ = fused.targetQMean();
            lastActorLoss = fused.actorLoss();
        }
        else
        {
            eagerStep(batch, actorTurn);
        }
        DivergedException.requireFinite("TD3", "critic_loss", lastCriticLoss);
        DivergedException.requireFinite("TD3", "actor_loss", lastActorLoss);
        updates++;
        double noiseMean = 0;
        for (final float n : noiseStage)
        {
            noiseMean += Math.abs(n);
        }
        sink.put(curLrActor, actor.optimizer().lr());
        sink.put(curLrCritic, critic.optimizer().lr());
        sink.put(criticLoss, lastCriticLoss);
        sink.put(actorLoss, lastActorLoss);
        sink.put(qValue, lastQ);
        sink.put(targetQValue, lastTargetQ);
        sink.put(policyNoise, noiseMean / noiseStage.length);
    }

    /** libtorch autograd, operator by operator: the fused update's reference. */
    private void eagerStep(final ControlBatch batch, final boolean actorTurn)
    {
        try (PointerScope scope = new PointerScope())
        {
            final Tensor next;
            try (NoGradGuard noGrad = new NoGradGuard())
            {
                final Tensor nextAction = actor.target(0).forward(batch.nextObsTensor()).tanh().add(noiseTensor)
                    .clamp(minusOne, one);
                next = targetMin(batch.nextObsTensor(), nextAction);
                lastTargetQ = next.mean().item_double();
            }
            final double[] criticOut = criticStep(batch, tdTarget(batch, next));
            lastCriticLoss = criticOut[0];
            lastQ = criticOut[1];
            if (actorTurn)
            {
                actor.params().zeroGrad();
                final Tensor loss = q(0, batch.obsTensor(), actor.net(0).forward(batch.obsTensor()).tanh()).mean()
                    .neg();
                loss.backward();
                actor.optimizer().step();
                lastActorLoss = loss.item_double();
            }
        }
        if (actorTurn)
        {
            actor.polyak(tau);
            critic.polyak(tau);
        }
    }

    @Override
    FusedActorCritic newFused()
    {
        return new FusedActorCritic(layout(FusedActorCritic.Kind.TD3, 0.0), actor.params(), actor.targetParams(),
            actor.optimizer(), critic.params(), critic.targetParams(), critic.optimizer(), null, null);
    }

    @Override
    public double action(final float[] raw, final int row, final int k, final ResumableRandom explore)
    {
        final double a = Math.tanh(raw[row + k]);
        if (null == explore)
        {
            return a;
        }
        return Math.max(-1.0, Math.min(1.0, a + settings.exploreSigma() * explore.nextGaussian()));
    }

    @Override
    List<String> optimizerKeys()
    {
        return List.of("optimizer_actor", "optimizer_critic");
    }

    @Override
    public List<FusedAdam> optimizers()
    {
        return List.of(actor.optimizer(), critic.optimizer());
    }

    /** @return the hyper-parameters */
    public Settings settings()
    {
        return settings;
    }

    @Override
    public String info()
    {
        return "Td3Policy(actor " + actor.params().numel() + ", twin critic " + critic.params().numel()
            + " parameters)";
    }
}
