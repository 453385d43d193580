package org.ding4j.hook;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.config.ValueRule;

/**
 * Hook types by name (DI-engine's {@code hook_mapping}), with the built-ins {@code load_ckpt}, {@code save_ckpt},
 * {@code log_show} and {@code log_reduce}, and the builder of a learner's hooks from its {@code hook} config
 * section. Thread-safe.
 */
public final class HookRegistry
{
    /** Priority of the simplified forms, as DI-engine's. */
    public static final int SIMPLIFIED_PRIORITY = 20;
    /** Priority of {@code log_reduce_after_iter}: before log_show, as DI-engine's. */
    public static final int LOG_REDUCE_PRIORITY = 10;
    /** Default priority of a full-form hook. */
    public static final int DEFAULT_PRIORITY = 100;

    private static final Map<String, HookFactory> TYPES = new ConcurrentHashMap<>();

    static
    {
        TYPES.put("load_ckpt", LoadCkptHook::new);
        TYPES.put("save_ckpt", SaveCkptHook::new);
        TYPES.put("log_show", LogShowHook::new);
        TYPES.put("log_reduce", LogReduceHook::new);
    }

    private HookRegistry()
    {
    }

    /**
     * Registers a hook type by factory.
     *
     * @param type    the name configs use
     * @param factory builds it
     */
    public static void register(final String type, final HookFactory factory)
    {
        TYPES.put(Objects.requireNonNull(type, "type"), Objects.requireNonNull(factory, "factory"));
    }

    /**
     * Registers a hook class, as DI-engine's {@code register_learner_hook(name, hook_type)}.
     *
     * @param type  the name configs use
     * @param clazz a {@link LearnerHook} subclass with a public
     *              {@code (String, int, HookPosition, Config)} constructor
     * @throws IllegalArgumentException if the class is not a hook or lacks that constructor
     */
    public static void registerLearnerHook(final String type, final Class<?> clazz)
    {
        Objects.requireNonNull(clazz, "clazz");
        if (!LearnerHook.class.isAssignableFrom(clazz))
        {
            throw new IllegalArgumentException("hook type " + type + ": " + clazz.getName()
                + " is not a subclass of LearnerHook");
        }
        final Constructor<?> constructor;
        try
        {
            constructor = clazz.getConstructor(String.class, int.class, HookPosition.class, Config.class);
        }
        catch (final NoSuchMethodException ex)
        {
            throw new IllegalArgumentException("hook type " + type + ": " + clazz.getName()
                + " needs a public (String name, int priority, HookPosition position, Config extArgs) constructor", ex);
        }
        register(type, (name, priority, position, extArgs) -> {
            try
            {
                return (LearnerHook)constructor.newInstance(name, priority, position, extArgs);
            }
            catch (final InvocationTargetException ex)
            {
                throw new IllegalArgumentException("hook " + name + ": " + ex.getCause(), ex.getCause());
            }
            catch (final ReflectiveOperationException ex)
            {
                throw new IllegalStateException("hook " + name + ": cannot construct " + clazz.getName(), ex);
            }
        });
    }

    /** @return the registered type names, sorted */
    public static List<String> types()
    {
        return new ArrayList<>(new TreeMap<>(TYPES).keySet());
    }

    /**
     * Builds one hook.
     *
     * @param type     a registered type
     * @param name     its name
     * @param priority >= 0
     * @param position where it runs
     * @param extArgs  its arguments
     * @return the hook
     * @throws IllegalArgumentException listing the known types if the type is unknown
     */
    public static LearnerHook create(
        final String type, final String name, final int priority, final HookPosition position, final Config extArgs)
    {
        final HookFactory factory = TYPES.get(type);
        if (null == factory)
        {
            throw new IllegalArgumentException("hook " + name + ": unknown type " + type + " (known: " + types() + ")");
        }
        return factory.create(name, priority, position, extArgs);
    }

    /**
     * Builds the hooks of a learner's {@code hook} section (DI-engine's {@code build_learner_hook_by_cfg}).
     * Simplified forms: {@code load_ckpt_before_run: PATH} (empty: none), {@code log_show_after_iter: N},
     * {@code save_ckpt_after_iter: N}, {@code save_ckpt_after_run: BOOL} and {@code log_reduce_after_iter: BOOL}
     * (false: none, unlike DI-engine, which builds it anyway). Any other key, and any key whose value is a map,
     * holds a full form {@code {name, type, priority=100, position, ext_args}} (the name defaults to the key).
     *
     * @param hookConfig the merged section
     * @param path       its key path, for error messages (e.g. {@code learner.hook})
     * @return the hooks
     * @throws ConfigException naming the key of a bad entry
     */
    public static Hooks build(final Config hookConfig, final String path)
    {
        final Hooks hooks = new Hooks();
        for (final String key : hookConfig.keys())
        {
            final String keyPath = path + "." + key;
            final Object value = hookConfig.get(key);
            try
            {
                // As DI-engine: any dict is a full form, under a simplified key too (its own test config writes
                // save_ckpt_after_iter: {name, type, priority, position, ext_args}).
                final LearnerHook hook = value instanceof Config ? full(keyPath, value)
                    : simplified(key, value, keyPath);
                if (null != hook)
                {
                    hooks.add(hook);
                }
                else if (!(value instanceof Config) && !isSimplified(key))
                {
                    hooks.add(full(keyPath, value));
                }
            }
            catch (final ConfigException ex)
            {
                throw ex;
            }
            catch (final IllegalArgumentException ex)
            {
                throw new ConfigException(keyPath, ex.getMessage(), ex);
            }
        }
        return hooks;
    }

    private static boolean isSimplified(final String key)
    {
        return switch (key)
        {
            case "load_ckpt_before_run", "log_show_after_iter", "save_ckpt_after_iter", "save_ckpt_after_run",
                "log_reduce_after_iter" -> true;
            default -> false;
        };
    }

    private static LearnerHook simplified(final String key, final Object value, final String keyPath)
    {
        final Config single = Config.empty().with("v", value);
        switch (key)
        {
            case "load_ckpt_before_run":
            {
                final String loadPath = single.getString("v");
                return loadPath.isEmpty() ? null : create("load_ckpt", "load_ckpt", SIMPLIFIED_PRIORITY,
                    HookPosition.BEFORE_RUN, Config.empty().with("load_path", loadPath));
            }
            case "log_show_after_iter":
                return create("log_show", "log_show", SIMPLIFIED_PRIORITY, HookPosition.AFTER_ITER,
                    Config.empty().with("freq", positive(keyPath, value)));
            case "save_ckpt_after_iter":
                return create("save_ckpt", "save_ckpt_after_iter", SIMPLIFIED_PRIORITY, HookPosition.AFTER_ITER,
                    Config.empty().with("freq", positive(keyPath, value)));
            case "save_ckpt_after_run":
                return bool(keyPath, value) ? create("save_ckpt", "save_ckpt_after_run", SIMPLIFIED_PRIORITY,
                    HookPosition.AFTER_RUN, Config.empty()) : null;
            case "log_reduce_after_iter":
                return bool(keyPath, value) ? create("log_reduce", "log_reduce_after_iter", LOG_REDUCE_PRIORITY,
                    HookPosition.AFTER_ITER, Config.empty()) : null;
            default:
                return null;
        }
    }

    private static long positive(final String keyPath, final Object value)
    {
        final String problem = ValueRule.POSITIVE_INTEGER.check(value);
        if (null != problem)
        {
            throw new ConfigException(keyPath, problem + ", got " + value);
        }
        return ((Number)value).longValue();
    }

    private static boolean bool(final String keyPath, final Object value)
    {
        if (!(value instanceof Boolean b))
        {
            throw new ConfigException(keyPath, "expected a boolean, got " + value);
        }
        return b;
    }

    private static LearnerHook full(final String keyPath, final Object value)
    {
        if (!(value instanceof Config form))
        {
            throw new ConfigException(keyPath, "expected a full hook form {name, type, priority, position, "
                + "ext_args}, got " + value);
        }
        for (final String key : form.keys())
        {
            if (!List.of("name", "type", "priority", "position", "ext_args").contains(key))
            {
                throw new ConfigException(keyPath + "." + key, "unknown key (known keys: name, type, priority, "
                    + "position, ext_args)");
            }
        }
        final String name = form.has("name") ? form.getString("name") : keyPath.substring(keyPath.lastIndexOf('.') + 1);
        if (!form.has("type"))
        {
            throw new ConfigException(keyPath + ".type", "missing key (known types: " + types() + ")");
        }
        final long priority = form.has("priority") ? form.getLong("priority") : DEFAULT_PRIORITY;
        if (priority < 0 || priority > Integer.MAX_VALUE)
        {
            throw new ConfigException(keyPath + ".priority", "expected an integer >= 0, got " + priority);
        }
        if (!form.has("position"))
        {
            throw new ConfigException(keyPath + ".position", "missing key");
        }
        final HookPosition position;
        try
        {
            position = HookPosition.of(form.getString("position"));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(keyPath + ".position", ex.getMessage());
        }
        final Config extArgs = form.has("ext_args") && null != form.get("ext_args") ? form.child("ext_args")
            : Config.empty();
        return create(form.getString("type"), name, (int)priority, position, extArgs);
    }
}
