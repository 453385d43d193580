package org.ding4j.example.pendulum;

import java.util.LinkedHashMap;
import java.util.Map;

import org.ding4j.example.ac.ContinuousActor;
import org.ding4j.example.ac.TransitionBuffer;
import org.ding4j.example.dqn.ResumableRandom;

/**
 * DI-engine's serial sample collector on vectorised Pendulum envs: each step acts on every env at once (the
 * policy's exploring action, or a uniform random one while the buffer holds fewer than {@code random_collect_size}
 * transitions), scales the [-1, 1] action to the torque range ({@code act_scale}), and stores the transition. An
 * episode ends at the time limit: a truncation, so the stored transition still bootstraps. Not thread-safe.
 */
final class PendulumCollector
{
    private final Pendulum envs;
    private final TransitionBuffer buffer;
    private final ResumableRandom explore;
    private final long randomCollect;
    private final float[] obs;
    private final float[] nextObs;
    private final float[] actions;
    private long envsteps;

    PendulumCollector(final Pendulum envs, final TransitionBuffer buffer, final long randomCollect, final long seed)
    {
        this.envs = envs;
        this.buffer = buffer;
        this.randomCollect = randomCollect;
        this.explore = new ResumableRandom(seed);
        obs = new float[envs.size() * Pendulum.OBS];
        nextObs = new float[envs.size() * Pendulum.OBS];
        actions = new float[envs.size() * Pendulum.ACTION];
        for (int i = 0; i < envs.size(); i++)
        {
            envs.observe(i, obs, i * Pendulum.OBS);
        }
    }

    /** Collects at least {@code n} transitions (whole vector steps), random ones first if the buffer is short. */
    void collect(final ContinuousActor actor, final int n)
    {
        final long until = envsteps + Math.max(n, randomCollect - buffer.pushed());
        while (envsteps < until)
        {
            if (buffer.pushed() < randomCollect)
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
            for (int i = 0; i < envs.size(); i++)
            {
                final double reward = envs.step(i, Pendulum.MAX_TORQUE * actions[i * Pendulum.ACTION]);
                envs.observe(i, nextObs, i * Pendulum.OBS);
                buffer.push(obs, i * Pendulum.OBS, actions, i * Pendulum.ACTION, reward, nextObs, i * Pendulum.OBS,
                    false);
                if (envs.truncated(i))
                {
                    envs.reset(i);
                    envs.observe(i, nextObs, i * Pendulum.OBS);
                }
            }
            System.arraycopy(nextObs, 0, obs, 0, obs.length);
            envsteps += envs.size();
        }
    }

    long envsteps()
    {
        return envsteps;
    }

    Map<String, Object> randomState()
    {
        final Map<String, Object> state = new LinkedHashMap<>();
        state.put("explore", explore.state());
        state.put("replay", buffer.randomState());
        return state;
    }

    void restoreRandomState(final Map<?, ?> state)
    {
        if (!(state.get("explore") instanceof Long e) || !(state.get("replay") instanceof Long r))
        {
            throw new IllegalArgumentException("random state: expected integers explore and replay, got " + state);
        }
        explore.state(e);
        buffer.restoreRandomState(r);
    }
}
