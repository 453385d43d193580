package org.ding4j.rl.dqn;

import org.ding4j.checkpoint.StateFields;
import org.ding4j.env.Discrete;
import org.ding4j.env.ResumableRandom;
import org.ding4j.env.VectorEnv;
import org.ding4j.learner.StopSignals;
import org.ding4j.torch.FlatParameters;

/**
 * DI-engine's sample collector with epsilon-greedy exploration over a {@link VectorEnv} with {@link Discrete}
 * actions. Epsilon decays exponentially in env steps, {@code end + (start - end) exp(-envstep / decay)}, computed once
 * per {@link #collect} call as DI-engine does. Transitions are assembled n-step: each env keeps its last n steps, and
 * a transition leaves with {@code return = sum_k gamma^k r_k}, the observation n steps later and bootstrap
 * {@code gamma^n}. When an episode terminates the pending steps leave with bootstrap 0; when it is truncated (a time
 * limit) they bootstrap from the final observation, unless {@code truncationBootstraps} is off (DI-engine's
 * CartPole counts the time limit as a terminal step). Not thread-safe.
 */
public final class Collector implements AutoCloseable
{
    private final VectorEnv envs;
    private final ReplayBuffer buffer;
    private final GreedyActor actor;
    private final ResumableRandom random;
    private final double epsStart;
    private final double epsEnd;
    private final double epsDecay;
    private final int nstep;
    private final double discount;
    private final boolean truncationBootstraps;
    private final int obsWidth;
    private final int actionCount;
    private final int[] greedy;
    private final float[] actions;
    private final float[] obs;
    private final float[][] pendingObs;
    private final int[][] pendingAction;
    private final float[][] pendingReward;
    private final int[] pendingCount;
    private final int[] pendingHead;
    private final double[] episodeReturn;
    // Volatile: in parallel mode the learner's thread reads it (checkpoints, ckpt_best, the summary).
    private volatile long envsteps;
    private long episodes;
    private double lastEpisodeReturn = Double.NaN;

    /**
     * @param envs                 the environments (reset already), with a {@link Discrete} action space
     * @param buffer               where transitions go
     * @param epsStart             epsilon at env step 0
     * @param epsEnd               epsilon's limit
     * @param epsDecay             decay constant, in env steps
     * @param nstep                TD steps per transition
     * @param discount             gamma
     * @param truncationBootstraps whether a truncated episode's last steps bootstrap from its final observation
     * @param seed                 the exploration generator's seed
     */
    public Collector(final VectorEnv envs, final ReplayBuffer buffer, final double epsStart, final double epsEnd,
        final double epsDecay, final int nstep, final double discount, final boolean truncationBootstraps,
        final long seed)
    {
        if (nstep < 1 || !(epsDecay > 0) || !(discount >= 0 && discount <= 1))
        {
            throw new IllegalArgumentException("Collector: expected nstep >= 1, decay > 0, 0 <= discount <= 1; got "
                + "nstep=" + nstep + " decay=" + epsDecay + " discount=" + discount);
        }
        if (!(envs.actionSpace() instanceof Discrete discrete))
        {
            throw new IllegalArgumentException("Collector: DQN acts in a Discrete action space, got "
                + envs.actionSpace());
        }
        this.envs = envs;
        this.buffer = buffer;
        this.obsWidth = envs.observationSpace().flatSize();
        this.actionCount = discrete.n();
        this.actor = new GreedyActor(envs.size(), obsWidth, actionCount);
        this.random = new ResumableRandom(seed);
        this.epsStart = epsStart;
        this.epsEnd = epsEnd;
        this.epsDecay = epsDecay;
        this.nstep = nstep;
        this.discount = discount;
        this.truncationBootstraps = truncationBootstraps;
        final int n = envs.size();
        greedy = new int[n];
        actions = new float[n];
        obs = new float[n * obsWidth];
        pendingObs = new float[n][nstep * obsWidth];
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
        final int n = envs.size();
        int pushedNow = 0;
        // A stop the application asked for (StopSignals) ends a long collection early: the run stops before its next
        // update.
        while (pushedNow < nSample && !StopSignals.stopAsked())
        {
            System.arraycopy(envs.observations(), 0, obs, 0, obs.length);
            actor.act(net, obs, greedy);
            for (int i = 0; i < n; i++)
            {
                actions[i] = random.nextDouble() < eps ? random.nextInt(actionCount) : greedy[i];
            }
            envs.step(actions);
            final float[] next = envs.observations();
            final float[] last = envs.finalObservations();
            for (int i = 0; i < n; i++)
            {
                envsteps++;
                final float reward = (float)envs.rewards()[i];
                episodeReturn[i] += reward;
                // Append this step to env i's window (a ring of nstep entries).
                final int slot = (pendingHead[i] + pendingCount[i]) % nstep;
                System.arraycopy(obs, i * obsWidth, pendingObs[i], slot * obsWidth, obsWidth);
                pendingAction[i][slot] = (int)actions[i];
                pendingReward[i][slot] = reward;
                pendingCount[i]++;
                if (envs.terminated()[i] || envs.truncated()[i])
                {
                    final boolean bootstrap = !envs.terminated()[i] && truncationBootstraps;
                    while (pendingCount[i] > 0)
                    {
                        pushedNow += emit(i, bootstrap ? (float)Math.pow(discount, pendingCount[i]) : 0f, last);
                    }
                    episodes++;
                    lastEpisodeReturn = episodeReturn[i];
                    episodeReturn[i] = 0.0;
                }
                else if (pendingCount[i] == nstep)
                {
                    pushedNow += emit(i, (float)Math.pow(discount, nstep), next);
                }
            }
        }
        return pushedNow;
    }

    /**
     * Pushes env i's oldest pending step with the return of the steps after it, the given bootstrap and row i of
     * {@code nextRows} as the observation it bootstraps from.
     */
    private int emit(final int i, final float bootstrap, final float[] nextRows)
    {
        final int head = pendingHead[i];
        double ret = 0.0;
        double gamma = 1.0;
        for (int k = 0; k < pendingCount[i]; k++)
        {
            ret += gamma * pendingReward[i][(head + k) % nstep];
            gamma *= discount;
        }
        buffer.push(pendingObs[i], head * obsWidth, pendingAction[i][head], (float)ret, bootstrap, nextRows,
            i * obsWidth);
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
        final long explore = StateFields.integer("random state", state, "explore");
        final long[] streams = StateFields.integers("random state", state, "envs", envs.size());
        random.state(explore);
        envs.restoreRandomStates(streams);
        envs.reset();
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
        envs.close();
    }
}
