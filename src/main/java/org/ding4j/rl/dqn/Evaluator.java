package org.ding4j.rl.dqn;

import org.ding4j.env.Discrete;
import org.ding4j.env.VectorEnv;
import org.ding4j.learner.StopSignals;
import org.ding4j.rl.pipeline.EnvValues;
import org.ding4j.torch.FlatParameters;

/**
 * DI-engine's evaluator: greedy episodes over a {@link VectorEnv} with {@link Discrete} actions, the return of each
 * the sum of its rewards. With {@code reseed} every evaluation re-seeds the environments first, so it replays the
 * same start states each time (DI-engine's protocol during training); without it each episode starts fresh from the
 * environments' generators (the stricter check of {@code ding4j eval}). Episodes are spread over the environments as
 * evenly as possible. Not thread-safe.
 */
public final class Evaluator implements AutoCloseable
{
    /**
     * One evaluation's outcome.
     *
     * @param episodes   episodes run
     * @param meanReturn their mean return
     * @param minReturn  the lowest
     * @param maxReturn  the highest
     */
    public record Result(int episodes, double meanReturn, double minReturn, double maxReturn)
    {
    }

    private final VectorEnv envs;
    private final GreedyActor actor;
    private final int episodes;
    private final long seed;
    private final boolean reseed;
    private final int[] greedy;
    private final float[] actions;
    private final int[] quota;
    private final boolean[] running;
    private final double[] episodeReturn;

    /**
     * @param envs     the environments
     * @param episodes episodes per evaluation
     * @param seed     the environments' seed ({@link VectorEnv#reset(long)})
     * @param reseed   whether each evaluation starts from the same seeded starts
     */
    public Evaluator(final VectorEnv envs, final int episodes, final long seed, final boolean reseed)
    {
        if (episodes < 1)
        {
            throw new IllegalArgumentException("n_evaluator_episode: expected a positive integer, got " + episodes);
        }
        if (!(envs.actionSpace() instanceof Discrete discrete))
        {
            throw new IllegalArgumentException("Evaluator: DQN acts in a Discrete action space, got "
                + envs.actionSpace());
        }
        this.envs = envs;
        this.actor = new GreedyActor(envs.size(), envs.observationSpace().flatSize(), discrete.n());
        this.episodes = episodes;
        this.seed = seed;
        this.reseed = reseed;
        greedy = new int[envs.size()];
        actions = new float[envs.size()];
        quota = new int[envs.size()];
        running = new boolean[envs.size()];
        episodeReturn = new double[envs.size()];
        envs.reset(seed);
    }

    /**
     * Evaluates {@code net} through the fused native forward (see {@link GreedyActor#fuse}).
     *
     * @param net     the net that will be evaluated
     * @param params  its flat parameters
     * @param hidden  its encoder widths
     * @param dueling whether its head is dueling
     */
    public void fuse(final QNetwork net, final FlatParameters params, final long[] hidden, final boolean dueling)
    {
        actor.fuse(net, params, hidden, dueling);
    }

    /**
     * @param net the Q-network acting greedily
     * @return the returns of this evaluation's episodes
     */
    public Result evaluate(final QNetwork net)
    {
        final int n = envs.size();
        if (reseed)
        {
            envs.reset(seed);
        }
        else
        {
            envs.reset();
        }
        EnvValues.requireFiniteReset(envs, "evaluation env");
        for (int i = 0; i < n; i++)
        {
            quota[i] = episodes / n + (i < episodes % n ? 1 : 0);
            running[i] = quota[i] > 0;
            episodeReturn[i] = 0.0;
        }
        double sum = 0.0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        int done = 0;
        // A stop the application asked for (StopSignals) ends an evaluation at once: its result is NaN, not recorded.
        while (done < episodes && !StopSignals.stopAsked())
        {
            actor.act(net, envs.observations(), greedy);
            for (int i = 0; i < n; i++)
            {
                actions[i] = greedy[i];
            }
            // Every env steps (they are independent); those past their quota are not counted.
            envs.step(actions);
            for (int i = 0; i < n; i++)
            {
                if (!running[i])
                {
                    continue;
                }
                EnvValues.requireFiniteStep(envs, i, "evaluation env");
                episodeReturn[i] += envs.rewards()[i];
                if (envs.terminated()[i] || envs.truncated()[i])
                {
                    final double ret = episodeReturn[i];
                    sum += ret;
                    min = Math.min(min, ret);
                    max = Math.max(max, ret);
                    done++;
                    episodeReturn[i] = 0.0;
                    running[i] = --quota[i] > 0;
                }
            }
        }
        return done < episodes ? new Result(done, Double.NaN, Double.NaN, Double.NaN)
            : new Result(episodes, sum / episodes, min, max);
    }

    @Override
    public void close()
    {
        actor.close();
        envs.close();
    }
}
