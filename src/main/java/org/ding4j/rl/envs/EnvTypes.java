package org.ding4j.rl.envs;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.env.Box;
import org.ding4j.env.Env;
import org.ding4j.env.Space;
import org.ding4j.env.TimeLimit;
import org.ding4j.env.VectorEnv;
import org.ding4j.internal.Closing;

/**
 * What {@code env.type} names: {@code cartpole} ({@link CartPole}), {@code pendulum} ({@link Pendulum}),
 * {@code acrobot} ({@link Acrobot}), or the
 * fully qualified name of a class on the class path that implements {@link Env} with a public no-argument
 * constructor, so that {@code ding4j train} runs on a user's own environment from their jar.
 */
public final class EnvTypes
{
    /** The values {@code env.type} takes, for messages. */
    public static final String CHOICES = "cartpole, pendulum, acrobot, or the name of a class implementing "
        + "org.ding4j.env.Env with a public no-argument constructor";

    private EnvTypes()
    {
    }

    /**
     * @param type an {@code env.type} value
     * @return whether it names one of ding4j's own envs (not a class of the user's)
     */
    public static boolean builtIn(final String type)
    {
        return null != builtInMaker(type);
    }

    /**
     * @param type an {@code env.type} value
     * @return null if the type names an environment, else what is wrong with it (a config rule's message)
     */
    public static String check(final Object type)
    {
        if (!(type instanceof String name))
        {
            return "expected " + CHOICES;
        }
        try
        {
            maker(name);
            return null;
        }
        catch (final IllegalArgumentException ex)
        {
            return ex.getMessage();
        }
    }

    /**
     * @param type            an {@code env.type} value
     * @param maxEpisodeSteps the time limit each env gets ({@link TimeLimit})
     * @return makes env {@code i} of a vector env (each a new instance)
     * @throws IllegalArgumentException if the type names no environment (see {@link #check})
     */
    public static IntFunction<Env> factory(final String type, final int maxEpisodeSteps)
    {
        final Supplier<Env> maker = maker(type);
        return i -> new TimeLimit(maker.get(), maxEpisodeSteps);
    }

    /**
     * @param cfg a config whose {@code env.type} passed {@link #check}
     * @param n   how many envs
     * @return {@code n} envs of {@code env.type} stepped on the calling thread, each with the
     *     {@code env.max_episode_steps} time limit, not reset yet
     */
    public static VectorEnv envs(final Config cfg, final int n)
    {
        return VectorEnv.sync(factory(cfg.getString("env.type"), cfg.getInt("env.max_episode_steps")), n);
    }

    /**
     * What an algorithm checks of {@code env.type}'s envs before anything runs.
     *
     * @param observation the observation space
     * @param action      the action space
     */
    public record Spaces(Box observation, Space action)
    {
    }

    /**
     * Makes one env of {@code env.type} and reads its spaces.
     *
     * @param cfg a config whose {@code env.type} passed {@link #check}
     * @return its spaces
     * @throws ConfigException naming {@code env.type} if its env gives no observation or action space
     * @throws IllegalStateException naming {@code env.type} and the class if making or closing that env failed
     */
    public static Spaces spaces(final Config cfg)
    {
        final String type = cfg.getString("env.type");
        final Env probe = maker(type).get();
        final Spaces spaces;
        try
        {
            final Box observation = probe.observationSpace();
            final Space action = probe.actionSpace();
            if (null == observation || null == action)
            {
                throw new ConfigException("env.type", type + "'s env returned no " + (null == observation
                    ? "observationSpace()" : "actionSpace()") + " (null): the pipeline sizes its nets and checks "
                    + "actions by them");
            }
            spaces = new Spaces(observation, action);
        }
        catch (final RuntimeException | Error ex)
        {
            Closing.afterFailure(List.of(probe), ex);
            throw ex;
        }
        try
        {
            probe.close();
        }
        catch (final RuntimeException ex)
        {
            // Named as a failing constructor is: the user's close() threw, on the env the spaces were read from.
            throw new IllegalStateException("env.type: " + type + "'s close() failed (on the env the pipeline read "
                + "its spaces from): " + ex, ex);
        }
        return spaces;
    }

    /**
     * @param cfg      the config
     * @param key      a width key
     * @param expected what {@code env.type}'s spaces say it must be
     * @param what     what the width is, for the message
     * @throws ConfigException naming the key, the env and both values if they differ
     */
    public static void checkWidth(final Config cfg, final String key, final long expected, final String what)
    {
        if (expected != cfg.getLong(key))
        {
            throw new ConfigException(key, "expected " + expected + " (" + cfg.getString("env.type") + "'s " + what
                + "), got " + cfg.get(key));
        }
    }

    private static Supplier<Env> maker(final String type)
    {
        final Supplier<Env> builtIn = builtInMaker(type);
        return null != builtIn ? builtIn : userClass(type);
    }

    /** @return the maker of one of ding4j's own envs, or null for any other name */
    private static Supplier<Env> builtInMaker(final String type)
    {
        switch (type)
        {
            case "cartpole":
                return CartPole::new;
            case "pendulum":
                return Pendulum::new;
            case "acrobot":
                return Acrobot::new;
            default:
                return null;
        }
    }

    private static Supplier<Env> userClass(final String name)
    {
        final Class<?> type;
        try
        {
            type = Class.forName(name, false, Thread.currentThread().getContextClassLoader());
        }
        catch (final ClassNotFoundException | LinkageError ex)
        {
            throw new IllegalArgumentException("expected " + CHOICES + "; " + name + " is no class on the class path "
                + "(the ding4j command adds yours with DING4J_CLASSPATH=your/classes, for train and eval alike)");
        }
        if (!Env.class.isAssignableFrom(type) || Modifier.isAbstract(type.getModifiers()))
        {
            throw new IllegalArgumentException("expected " + CHOICES + "; " + name + " is not a concrete "
                + "org.ding4j.env.Env");
        }
        if (!Modifier.isPublic(type.getModifiers())
            || null != type.getEnclosingClass() && !Modifier.isStatic(type.getModifiers()))
        {
            throw new IllegalArgumentException("expected " + CHOICES + "; " + name + " is not a public "
                + (null == type.getEnclosingClass() ? "class" : "static nested class")
                + ": the pipeline makes its envs through its public no-argument constructor");
        }
        final Constructor<?> constructor;
        try
        {
            constructor = type.getConstructor();
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalArgumentException("expected " + CHOICES + "; " + name + " has no public no-argument "
                + "constructor");
        }
        return () ->
        {
            try
            {
                return (Env)constructor.newInstance();
            }
            catch (final ReflectiveOperationException ex)
            {
                final Throwable cause = null == ex.getCause() ? ex : ex.getCause();
                throw new IllegalStateException("env.type: new " + name + "() failed: " + cause, cause);
            }
        };
    }
}
