package org.ding4j.learner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.ding4j.config.Config;
import org.ding4j.config.ConfigException;
import org.ding4j.dist.DistInfo;
import org.ding4j.log.SummaryWriter;
import org.ding4j.policy.Policy;

/**
 * DI-engine's {@code LEARNER_REGISTRY}: learner types by name, {@code base} built in. {@link #createLearner} loads
 * the classes named in {@code import_names} first (their static initialisers may register more types), as
 * DI-engine imports modules. Thread-safe.
 */
public final class LearnerRegistry
{
    /** Builds a learner of one type; the arguments are {@link BaseLearner}'s constructor's. */
    @FunctionalInterface
    public interface Factory
    {
        /**
         * @param cfg          the user's learner config
         * @param policy       the policy, or null
         * @param tbLogger     the summary writer, or null
         * @param distInfo     rank and world size, or null for the environment's
         * @param expName      experiment name
         * @param instanceName learner name
         * @return the learner
         */
        BaseLearner<?> create(Config cfg, Policy<?> policy, SummaryWriter tbLogger, DistInfo distInfo, String expName,
            String instanceName);
    }

    private static final Map<String, Factory> TYPES = new ConcurrentHashMap<>();

    static
    {
        TYPES.put("base", LearnerRegistry::base);
    }

    private LearnerRegistry()
    {
    }

    /**
     * @param type    the name configs use in {@code type}
     * @param factory builds it
     */
    public static void register(final String type, final Factory factory)
    {
        TYPES.put(Objects.requireNonNull(type, "type"), Objects.requireNonNull(factory, "factory"));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static BaseLearner<?> base(final Config cfg, final Policy<?> policy, final SummaryWriter tbLogger,
        final DistInfo distInfo, final String expName, final String instanceName)
    {
        return new BaseLearner(cfg, policy, tbLogger, distInfo, expName, instanceName);
    }

    /** @return registered type names, sorted */
    public static List<String> types()
    {
        return new ArrayList<>(new TreeMap<>(TYPES).keySet());
    }

    /**
     * Builds the learner registered under {@code cfg.type} (default {@code base}).
     *
     * @param cfg          the user's learner config
     * @param policy       the policy, or null
     * @param tbLogger     the summary writer, or null
     * @param distInfo     rank and world size, or null
     * @param expName      experiment name
     * @param instanceName learner name
     * @param <B>          the policy's batch type
     * @return the learner
     * @throws ConfigException naming {@code learner.type} (with the known types) or an import that fails
     */
    @SuppressWarnings("unchecked")
    public static <B> BaseLearner<B> createLearner(
        final Config cfg, final Policy<B> policy, final SummaryWriter tbLogger, final DistInfo distInfo,
        final String expName, final String instanceName)
    {
        final Config config = null == cfg ? Config.empty() : cfg;
        if (config.has("import_names"))
        {
            final List<Object> names = config.getList("import_names");
            for (int i = 0; i < names.size(); i++)
            {
                final String name = String.valueOf(names.get(i));
                try
                {
                    Class.forName(name, true, Thread.currentThread().getContextClassLoader());
                }
                catch (final ClassNotFoundException | LinkageError ex)
                {
                    throw new ConfigException("learner.import_names[" + i + "]", "cannot load class " + name, ex);
                }
            }
        }
        final String type = config.has("type") ? config.getString("type") : "base";
        final Factory factory = TYPES.get(type);
        if (null == factory)
        {
            throw new ConfigException("learner.type", "unknown learner type \"" + type + "\" (known types: "
                + types() + ")");
        }
        return (BaseLearner<B>)factory.create(config, policy, tbLogger, distInfo, expName, instanceName);
    }
}
