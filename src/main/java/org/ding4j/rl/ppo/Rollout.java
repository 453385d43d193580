package org.ding4j.rl.ppo;

import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.Box;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.learner.StopSignals;
import org.ding4j.rl.pipeline.ActionScale;
import org.ding4j.rl.pipeline.EnvValues;
import org.ding4j.rl.pipeline.Replay;
import org.ding4j.torch.FusedPpo;

/**
 * PPO's on-policy data: {@link #collect} runs {@code n_sample / envs} steps of every env with the current policy
 * (sampled actions, their log-probabilities, the values), and {@link #sample} hands the whole rollout to the update
 * once, with GAE(lambda) advantages and returns ({@link FusedPpo#gae}, native); the next collect starts a fresh one.
 * A terminated episode bootstraps from nothing; a truncated one (a time limit) from the value of its final
 * observation; the rollout's last step from the value of the observation that follows it. A non-finite reward or
 * observation is refused with its env's index. Not thread-safe: the learner's thread.
 */
final class Rollout implements Replay<PpoBatch>, AutoCloseable
{
    private final VectorEnv envs;
    private final int envCount;
    private final int steps;
    private final int rows;
    private final int obsWidth;
    private final int actionWidth;
    private final double gamma;
    private final double lambda;
    private final ActionScale scale;
    private final ResumableRandom explore;
    private final float[] obs;
    private final float[] actions;
    private final float[] logp;
    private final float[] values;
    private final float[] rewards;
    /** Per row: {@link FusedPpo#ENDED}, with {@link FusedPpo#TERMINAL} for a terminal state. */
    private final byte[] flags;
    private final float[] truncValues;
    private final float[] lastValues;
    private final float[] advantages;
    private final float[] returns;
    private final float[] current;
    private final float[] stepActions;
    private final float[] stepLogp;
    private final float[] stepValues;
    private final float[] envActions;
    private final float[] finalValues;
    private boolean full;
    private long envsteps;

    /**
     * @param envs   the collector's envs, reset already
     * @param rows   transitions per rollout, a multiple of the env count
     * @param gamma  the discount
     * @param lambda GAE's lambda
     * @param seed   the exploration stream's seed
     */
    Rollout(final VectorEnv envs, final int rows, final double gamma, final double lambda, final long seed)
    {
        this.envs = envs;
        this.envCount = envs.size();
        if (0 != rows % envCount)
        {
            throw new IllegalArgumentException("policy.collect.n_sample: expected a multiple of env.collector_env_num "
                + envCount + " (each env steps n_sample / envs times), got " + rows);
        }
        this.rows = rows;
        this.steps = rows / envCount;
        this.obsWidth = envs.observationSpace().flatSize();
        this.actionWidth = envs.actionSpace() instanceof Box box ? box.flatSize() : 1;
        this.scale = envs.actionSpace() instanceof Box box ? new ActionScale(box) : null;
        this.gamma = gamma;
        this.lambda = lambda;
        this.explore = new ResumableRandom(seed);
        obs = new float[rows * obsWidth];
        actions = new float[rows * actionWidth];
        logp = new float[rows];
        values = new float[rows];
        rewards = new float[rows];
        flags = new byte[rows];
        truncValues = new float[rows];
        lastValues = new float[envCount];
        advantages = new float[rows];
        returns = new float[rows];
        current = envs.observations().clone();
        // Acted on and stored by the first collect: checked as every later observation is.
        finite(current, "observation after reset");
        stepActions = new float[envCount * actionWidth];
        stepLogp = new float[envCount];
        stepValues = new float[envCount];
        envActions = new float[envCount * actionWidth];
        finalValues = new float[envCount];
    }

    /**
     * Collects a fresh rollout (the previous one is dropped). A stop the application asks for ends it early; the
     * partial rollout is never handed to an update.
     *
     * @param acting the policy's acting copy
     */
    void collect(final PpoPolicy.Acting acting)
    {
        full = false;
        for (int t = 0; t < steps; t++)
        {
            if (StopSignals.stopAsked())
            {
                return;
            }
            acting.sample(current, envCount, stepActions, stepLogp, stepValues, explore);
            final int at = t * envCount;
            System.arraycopy(current, 0, obs, at * obsWidth, envCount * obsWidth);
            System.arraycopy(stepActions, 0, actions, at * actionWidth, envCount * actionWidth);
            System.arraycopy(stepLogp, 0, logp, at, envCount);
            System.arraycopy(stepValues, 0, values, at, envCount);
            if (null == scale)
            {
                envs.step(stepActions);
            }
            else
            {
                for (int k = 0; k < stepActions.length; k++)
                {
                    stepActions[k] = Math.max(-1f, Math.min(1f, stepActions[k]));
                }
                scale.apply(stepActions, envActions, envCount);
                envs.step(envActions);
            }
            boolean truncation = false;
            for (int i = 0; i < envCount; i++)
            {
                final double reward = envs.rewards()[i];
                EnvValues.requireFinite("reward", reward, "env", i);
                rewards[at + i] = (float)reward;
                flags[at + i] = envs.terminated()[i] ? (byte)(FusedPpo.ENDED | FusedPpo.TERMINAL)
                    : envs.truncated()[i] ? FusedPpo.ENDED : 0;
                truncation |= envs.truncated()[i] && !envs.terminated()[i];
            }
            if (truncation)
            {
                finite(envs.finalObservations(), "final observation");
                acting.values(envs.finalObservations(), envCount, finalValues);
                System.arraycopy(finalValues, 0, truncValues, at, envCount);
            }
            System.arraycopy(envs.observations(), 0, current, 0, current.length);
            finite(current, "observation");
            envsteps += envCount;
        }
        acting.values(current, envCount, lastValues);
        full = true;
    }

    private void finite(final float[] rowsOf, final String what)
    {
        for (int i = 0; i < envCount; i++)
        {
            EnvValues.requireFinite(what, rowsOf, i * obsWidth, obsWidth, "env", i);
        }
    }

    /** Hands the whole rollout over once, with its advantages and returns. */
    @Override
    public boolean sample(final PpoBatch batch)
    {
        if (!full)
        {
            return false;
        }
        FusedPpo.gae(steps, envCount, rewards, values, flags, truncValues, lastValues, gamma, lambda, advantages,
            returns);
        batch.fill(obs, actions, logp, values, advantages, returns);
        full = false;
        return true;
    }

    @Override
    public int size()
    {
        return full ? rows : 0;
    }

    /** @return env steps so far */
    long envsteps()
    {
        return envsteps;
    }

    /** Continues the env-step count of a resumed run. */
    void resumeAt(final long envSteps)
    {
        envsteps = envSteps;
    }

    /** @return the exploration stream and the envs' own */
    Map<String, Object> randomState()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("explore", explore.state());
        state.put("envs", java.util.Arrays.stream(envs.randomStates()).boxed().toList());
        return state;
    }

    /**
     * Continues the streams of {@link #randomState()}; every env starts a new episode.
     *
     * @param state from {@link #randomState()}
     */
    void restoreRandomState(final Map<?, ?> state)
    {
        final long e = StateFields.integer("random state", state, "explore");
        final long[] streams = StateFields.integers("random state", state, "envs", envCount);
        explore.state(e);
        envs.restoreRandomStates(streams);
        // Episodes in progress are not saved (as DQN's collector): every env starts a new one from its stream.
        envs.reset();
        System.arraycopy(envs.observations(), 0, current, 0, current.length);
        finite(current, "observation after reset");
        full = false;
    }

    @Override
    public void close()
    {
        envs.close();
    }
}
