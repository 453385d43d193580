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

    @Override
    protected Object learn(final Object data)
    {
        trained.add(data);
        final List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < updatesPerCall; i++)
        {
            updates++;
            final Map<String, Object> vars = new LinkedHashMap<>();
            vars.put("total_loss", 1.0 / updates);
            vars.put("cur_lr", 0.1);
            vars.put("[scalars]q", new java.util.TreeMap<>(Map.of("a", 1.0, "b", 2.0)));
            vars.put("[histogram]td", List.of(1.0, 2.0, 3.0));
            out.add(vars);
        }
        if (withPriority)
        {
            out.get(out.size() - 1).put("priority", List.of(0.5, 0.25));
        }
        return 1 == updatesPerCall ? out.get(0) : out;
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
