package org.ding4j.example.envs;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.util.function.IntFunction;
import java.util.function.Supplier;

import org.ding4j.env.Env;
import org.ding4j.env.TimeLimit;

/**
 * What {@code env.type} names: {@code cartpole} ({@link CartPole}), {@code pendulum} ({@link Pendulum}), or the
 * fully qualified name of a class on the class path that implements {@link Env} with a public no-argument
 * constructor, so that {@code ding4j train} runs on a user's own environment from their jar.
 */
public final class EnvTypes
{
    /** The values {@code env.type} takes, for messages. */
    public static final String CHOICES = "cartpole, pendulum, or the name of a class implementing org.ding4j.env.Env "
        + "with a public no-argument constructor";

    private EnvTypes()
    {
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

    private static Supplier<Env> maker(final String type)
    {
        switch (type)
        {
            case "cartpole":
                return CartPole::new;
            case "pendulum":
                return Pendulum::new;
            default:
                return userClass(type);
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
            throw new IllegalArgumentException("expected " + CHOICES + ", got " + name + " (no such class on the class "
                + "path)");
        }
        if (!Env.class.isAssignableFrom(type) || Modifier.isAbstract(type.getModifiers()))
        {
            throw new IllegalArgumentException("expected " + CHOICES + ", got " + name + " (not a concrete "
                + "org.ding4j.env.Env)");
        }
        final Constructor<?> constructor;
        try
        {
            constructor = type.getConstructor();
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalArgumentException("expected " + CHOICES + ", got " + name + " (no public no-argument "
                + "constructor)");
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
