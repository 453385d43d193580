package org.ding4j.example.cartpole;

import org.ding4j.example.dqn.QNetwork;
import org.ding4j.example.dqn.ResumableRandom;
import org.ding4j.torch.FlatParameters;
import org.ding4j.example.dqn.ReplayBuffer;

/**
 * DI-engine's sample collector with epsilon-greedy exploration over a vector of {@link CartPole}s. Epsilon decays
 * exponentially in env steps, {@code end + (start - end) exp(-envstep / decay)}, computed once per
 * {@link #collect} call as DI-engine does. Transitions are assembled n-step: each env keeps its last n steps, and
 * a transition leaves with {@code return = sum_k gamma^k r_k}, the observation n steps later and bootstrap
 * {@code gamma^n}; when an episode ends (failure or time limit, both terminal as in DI-engine's CartPole) the
 * pending steps leave with bootstrap 0. Not thread-safe.
 */
public final class Collector implements AutoCloseable
{
    private final CartPole envs;
    private final ReplayBuffer buffer;
    private final GreedyActor actor;
    private final ResumableRandom random;
    private final double epsStart;
    private final double epsEnd;
    private final double epsDecay;
    private final int nstep;
    private final double discount;
    private final int[] actions;
    private final float[][] pendingObs;
    private final int[][] pendingAction;
    private final float[][] pendingReward;
    private final int[] pendingCount;
    private final int[] pendingHead;
    private final float[] next = new float[CartPole.OBS];
    private final double[] episodeReturn;
    private long envsteps;
    private long episodes;
    private double lastEpisodeReturn = Double.NaN;

    /**
     * @param envs     the environments (reset already)
     * @param buffer   where transitions go
     * @param epsStart epsilon at env step 0
     * @param epsEnd   epsilon's limit
     * @param epsDecay decay constant, in env steps
     * @param nstep    TD steps per transition
     * @param discount gamma
     * @param seed     the exploration generator's seed
     */
    public Collector(final CartPole envs, final ReplayBuffer buffer, final double epsStart, final double epsEnd,
        final double epsDecay, final int nstep, final double discount, final long seed)
    {
        if (nstep < 1 || !(epsDecay > 0) || !(discount >= 0 && discount <= 1))
        {
            throw new IllegalArgumentException("Collector: expected nstep >= 1, decay > 0, 0 <= discount <= 1; got "
                + "nstep=" + nstep + " decay=" + epsDecay + " discount=" + discount);
        }
        this.envs = envs;
        this.buffer = buffer;
        this.actor = new GreedyActor(envs);
        this.random = new ResumableRandom(seed);
        this.epsStart = epsStart;
        this.epsEnd = epsEnd;
        this.epsDecay = epsDecay;
        this.nstep = nstep;
        this.discount = discount;
        final int n = envs.size();
        actions = new int[n];
        pendingObs = new float[n][nstep * CartPole.OBS];
        pendingAction = new int[n][nstep];
        pendingReward = new float[n][nstep];
        pendingCount = new int[n];
        pendingHead = new int[n];
        episodeReturn = new double[n];
    }

    /** @return epsilon at the current env step */
    public double epsilon()
    {
        return epsEnd + (epsStart - epsEnd) * Math.exp(-envsteps / epsDecay);
    }

    /**
     * Steps every environment once per round until at least {@code nSample} transitions went into the buffer.
     *
     * @param net     the Q-network acting greedily
     * @param nSample how many transitions at least
     * @return how many were pushed
     */
    public int collect(final QNetwork net, final int nSample)
    {
        final double eps = epsilon();
        int pushedNow = 0;
        while (pushedNow < nSample)
        {
            actor.act(net, actions);
            final float[] obs = actor.observations();
            for (int i = 0; i < envs.size(); i++)
            {
                final int a = random.nextDouble() < eps ? random.nextInt(CartPole.ACTIONS) : actions[i];
                final boolean done = envs.step(i, a);
                envsteps++;
                episodeReturn[i] += 1.0;
                // Append this step to env i's window (a ring of nstep entries).
                final int slot = (pendingHead[i] + pendingCount[i]) % nstep;
                System.arraycopy(obs, i * CartPole.OBS, pendingObs[i], slot * CartPole.OBS, CartPole.OBS);
                pendingAction[i][slot] = a;
                pendingReward[i][slot] = 1f;
                pendingCount[i]++;
                envs.observe(i, next, 0);
                if (done)
                {
                    while (pendingCount[i] > 0)
                    {
                        pushedNow += emit(i, 0f);
                    }
                    episodes++;
                    lastEpisodeReturn = episodeReturn[i];
                    episodeReturn[i] = 0.0;
                    envs.reset(i);
                }
                else if (pendingCount[i] == nstep)
                {
                    pushedNow += emit(i, (float)Math.pow(discount, nstep));
                }
            }
        }
        return pushedNow;
    }

    /** Pushes env i's oldest pending step with the return of the steps after it and the given bootstrap. */
    private int emit(final int i, final float bootstrap)
    {
        final int head = pendingHead[i];
        double ret = 0.0;
        double gamma = 1.0;
        for (int k = 0; k < pendingCount[i]; k++)
        {
            ret += gamma * pendingReward[i][(head + k) % nstep];
            gamma *= discount;
        }
        buffer.push(pendingObs[i], head * CartPole.OBS, pendingAction[i][head], (float)ret, bootstrap, next, 0);
        pendingHead[i] = (head + 1) % nstep;
        pendingCount[i]--;
        return 1;
    }

    /** @return env steps taken so far */
    public long envsteps()
    {
        return envsteps;
    }

    /** @return episodes finished so far */
    public long episodes()
    {
        return episodes;
    }

    /** @return the return of the last finished episode, NaN before the first */
    public double lastEpisodeReturn()
    {
        return lastEpisodeReturn;
    }

    /**
     * Computes {@code net}'s greedy actions through the fused native forward (see {@link GreedyActor#fuse}).
     *
     * @param net     the net the collector will be given
     * @param params  its flat parameters
     * @param hidden  its encoder widths
     * @param dueling whether its head is dueling
     */
    public void fuse(final QNetwork net, final FlatParameters params, final long[] hidden, final boolean dueling)
    {
        actor.fuse(net, params, hidden, dueling);
    }

    /** @return the random streams the collector draws from (exploration, env starts), for a checkpoint */
    public java.util.Map<String, Object> randomState()
    {
        final java.util.Map<String, Object> state = new java.util.LinkedHashMap<>();
        state.put("explore", random.state());
        state.put("envs", java.util.Arrays.stream(envs.randomStates()).boxed().toList());
        return state;
    }

    /**
     * Continues the streams of {@link #randomState()}; every env starts a new episode.
     *
     * @param state from a checkpoint
     * @throws IllegalArgumentException naming the key if it is missing or of the wrong type
     */
    public void restoreRandomState(final java.util.Map<?, ?> state)
    {
        if (!(state.get("explore") instanceof Long explore) || !(state.get("envs") instanceof java.util.List<?> envStates)
            || envStates.stream().anyMatch(v -> !(v instanceof Long)))
        {
            throw new IllegalArgumentException("collector random state: expected explore (an int) and envs (ints), got "
                + state);
        }
        random.state(explore);
        envs.restoreRandomStates(envStates.stream().mapToLong(v -> (Long)v).toArray());
        // The restarted episodes begin with empty n-step windows and returns.
        java.util.Arrays.fill(pendingCount, 0);
        java.util.Arrays.fill(episodeReturn, 0.0);
    }

    /**
     * Continues the env-step count of a resumed run (epsilon follows it).
     *
     * @param steps env steps already taken
     */
    public void resumeAt(final long steps)
    {
        envsteps = steps;
    }

    @Override
    public void close()
    {
        actor.close();
    }
}
