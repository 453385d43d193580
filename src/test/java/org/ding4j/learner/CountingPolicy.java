package org.ding4j.learner;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.ding4j.policy.MapPolicy;

/** A policy without native code: each update adds 1 to a counter; its state is that counter. */
class CountingPolicy extends MapPolicy<Object>
{
    long updates;
    int updatesPerCall = 1;
    boolean withPriority;
    String device = "cpu";
    final List<Object> trained = new ArrayList<>();
    final List<Map<String, Object>> loaded = new ArrayList<>();

    /**
     * A data source's chunk for this policy: {@code size} samples {@code {obs: i}}.
     *
     * @param size samples
     * @return the chunk
     */
    static List<Map<String, Object>> chunk(final int size)
    {
        final List<Map<String, Object>> chunk = new ArrayList<>();
        for (int i = 0; i < size; i++)
        {
            chunk.add(Map.of("obs", i));
        }
        return chunk;
    }

    @Override
    protected Map<String, Object> learn(final Object data)
    {
        trained.add(data);
        updates++;
        final Map<String, Object> vars = new LinkedHashMap<>();
        vars.put("total_loss", 1.0 / updates);
        vars.put("cur_lr", 0.1);
        vars.put("[scalars]q", new java.util.TreeMap<>(Map.of("a", 1.0, "b", 2.0)));
        vars.put("[histogram]td", List.of(1.0, 2.0, 3.0));
        if (withPriority)
        {
            vars.put("priority", List.of(0.5, 0.25));
        }
        return vars;
    }

    @Override
    protected int updatesPerCall(final Object data)
    {
        return updatesPerCall;
    }

    @Override
    public List<String> monitorVars()
    {
        return List.of("cur_lr", "total_loss");
    }

    @Override
    public int batchSize()
    {
        return 4;
    }

    @Override
    public String device()
    {
        return device;
    }

    @Override
    public Map<String, Object> stateDict()
    {
        return new LinkedHashMap<>(Map.of("model", Map.of("updates", updates)));
    }

    @Override
    public void loadStateDict(final Map<String, Object> state)
    {
        loaded.add(state);
        updates = (Long)((Map<?, ?>)state.get("model")).get("updates");
    }
}
