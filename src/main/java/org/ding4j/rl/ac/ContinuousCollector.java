package org.ding4j.rl.ac;

import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.Box;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.learner.StopSignals;
import org.ding4j.rl.pipeline.ActionScale;
import org.ding4j.rl.pipeline.Actor;

/**
 * DI-engine's serial sample collector for TD3 and SAC on a {@link VectorEnv} with a bounded {@link Box} action
 * space: each step acts on every env at once (the policy's exploring action, or a uniform random one during the run's
 * first {@code random_collect_size} env steps), scales the [-1, 1] action onto the space's
 * bounds, and stores the transition with the actor's action. A terminated episode stores no bootstrap; a truncated
 * one (a time limit) still bootstraps from its final observation. Not thread-safe.
 */
final class ContinuousCollector implements AutoCloseable
{
    private final VectorEnv envs;
    private final TransitionBuffer buffer;
    private final ResumableRandom explore;
    private final long randomCollect;
    private final ActionScale scale;
    private final int obsWidth;
    private final int actionWidth;
    private final float[] obs;
    private final float[] actions;
    private final float[] envActions;
    // Volatile: in parallel mode the learner's thread reads it (checkpoints, ckpt_best, the summary).
    private volatile long envsteps;

    /** @param envs the environments, reset already */
    ContinuousCollector(final VectorEnv envs, final TransitionBuffer buffer, final long randomCollect, final long seed)
    {
        this.envs = envs;
        this.buffer = buffer;
        this.randomCollect = randomCollect;
        this.explore = new ResumableRandom(seed);
        this.scale = new ActionScale((Box)envs.actionSpace());
        obsWidth = envs.observationSpace().flatSize();
        actionWidth = envs.actionSpace().flatSize();
        obs = envs.observations().clone();
        actions = new float[envs.size() * actionWidth];
        envActions = new float[actions.length];
    }

    /**
     * Collects at least {@code n} transitions (whole vector steps), the rest of the random warm-up first. The warm-up
     * is the run's first {@code random_collect_size} env steps, a resumed run's steps counted in: a run resumed past
     * it refills its replay (which checkpoints do not hold) with its trained policy's own actions.
     */
    void collect(final Actor actor, final int n)
    {
        final long until = envsteps + Math.max(n, randomCollect - envsteps);
        // A stop the application asked for (StopSignals) ends a long collection early: the run stops before its next
        // update.
        while (envsteps < until && !StopSignals.stopAsked())
        {
            if (envsteps < randomCollect)
            {
                for (int k = 0; k < actions.length; k++)
                {
                    actions[k] = (float)explore.nextDouble(-1.0, 1.0);
                }
            }
            else
            {
                actor.act(obs, envs.size(), actions, explore);
            }
            scale.apply(actions, envActions, envs.size());
            envs.step(envActions);
            for (int i = 0; i < envs.size(); i++)
            {
                final boolean ended = envs.terminated()[i] || envs.truncated()[i];
                buffer.push(obs, i * obsWidth, actions, i * actionWidth, envs.rewards()[i],
                    ended ? envs.finalObservations() : envs.observations(), i * obsWidth, envs.terminated()[i]);
            }
            System.arraycopy(envs.observations(), 0, obs, 0, obs.length);
            envsteps += envs.size();
        }
    }

    long envsteps()
    {
        return envsteps;
    }

    /** Continues the env-step count of a resumed run. */
    void resumeAt(final long steps)
    {
        envsteps = steps;
    }

    /** @return the exploration, replay and env-start streams (a resume continues them, as DQN's and PPO's do) */
    Map<String, Object> randomState()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("explore", explore.state());
        state.put("replay", buffer.randomState());
        state.put("envs", java.util.Arrays.stream(envs.randomStates()).boxed().toList());
        return state;
    }

    /**
     * Continues the streams of {@link #randomState()}; every env starts a new episode from its own. A state without
     * {@code envs} (saved before they were) leaves the envs' streams as they are, as such a resume always did.
     */
    void restoreRandomState(final Map<?, ?> state)
    {
        final long e = StateFields.integer("random state", state, "explore");
        final long r = StateFields.integer("random state", state, "replay");
        final long[] streams = state.containsKey("envs")
            ? StateFields.integers("random state", state, "envs", envs.size()) : null;
        explore.state(e);
        buffer.restoreRandomState(r);
        if (null != streams)
        {
            envs.restoreRandomStates(streams);
            // Episodes in progress are not saved (as DQN's collector): every env starts a new one from its stream.
            envs.reset();
            System.arraycopy(envs.observations(), 0, obs, 0, obs.length);
        }
    }

    /** @return how many envs it steps */
    int envCount()
    {
        return envs.size();
    }

    /** Closes the envs. */
    @Override
    public void close()
    {
        envs.close();
    }
}
