package org.ding4j.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.ding4j.config.Config;
import org.junit.jupiter.api.Test;

/** DI-engine's test_learner_hook.py scenarios: positions, priorities, stable order, registry, config forms. */
class HooksTest
{
    static final List<String> CALLS = new ArrayList<>();

    /** A hook type registered by class in these tests. */
    public static final class TracingHook extends LearnerHook
    {
        private final String tag;

        public TracingHook(final String name, final int priority, final HookPosition position, final Config extArgs)
        {
            super(name, priority, position);
            this.tag = extArgs.has("tag") ? extArgs.getString("tag") : name;
        }

        @Override
        public void call(final HookContext context)
        {
            CALLS.add(tag);
        }
    }

    private static LearnerHook hook(final String name, final int priority)
    {
        return new TracingHook(name, priority, HookPosition.AFTER_ITER, Config.empty());
    }

    @Test
    void shouldKeepHooksSortedByPriorityAndStableAmongEquals()
    {
        final Hooks hooks = new Hooks();
        hooks.add(hook("c", 30));
        hooks.add(hook("a1", 10));
        hooks.add(hook("b", 20));
        hooks.add(hook("a2", 10));
        hooks.add(hook("z", 0));
        assertEquals("[z@after_iter/0, a1@after_iter/10, a2@after_iter/10, b@after_iter/20, c@after_iter/30]",
            hooks.at(HookPosition.AFTER_ITER).toString());

        final Hooks other = new Hooks();
        other.add(hook("a3", 10));
        other.add(hook("d", 40));
        hooks.merge(other);
        assertEquals(List.of("z", "a1", "a2", "a3", "b", "c", "d"),
            hooks.at(HookPosition.AFTER_ITER).stream().map(LearnerHook::name).toList());
        assertEquals(List.of(), hooks.at(HookPosition.BEFORE_RUN));
        CALLS.clear();
        hooks.call(HookPosition.AFTER_ITER, null);
        assertEquals(List.of("z", "a1", "a2", "a3", "b", "c", "d"), CALLS);
    }

    @Test
    void shouldRejectNegativePrioritiesAndUnknownPositions()
    {
        assertThrows(IllegalArgumentException.class, () -> hook("x", -1));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> HookPosition.of("after_step"));
        assertEquals("hook position: expected one of [before_run, after_run, before_iter, after_iter], got after_step",
            ex.getMessage());
    }

    @Test
    void shouldRegisterHookTypesByClassAndBuildThemFromTheFullForm()
    {
        HookRegistry.registerLearnerHook("tracing", TracingHook.class);
        final IllegalArgumentException notAHook = assertThrows(IllegalArgumentException.class,
            () -> HookRegistry.registerLearnerHook("string", String.class));
        assertEquals("hook type string: java.lang.String is not a subclass of LearnerHook", notAHook.getMessage());

        final Config cfg = Config.of(Map.of(
            "log_show_after_iter", 10,
            "save_ckpt_after_run", true,
            "load_ckpt_before_run", "",
            "log_reduce_after_iter", true,
            "mine", Map.of("name", "trace", "type", "tracing", "position", "before_iter", "ext_args",
                Map.of("tag", "hello"))));
        final Hooks hooks = HookRegistry.build(cfg, "learner.hook");
        assertEquals("[log_reduce_after_iter@after_iter/10, log_show@after_iter/20]",
            hooks.at(HookPosition.AFTER_ITER).toString());
        assertEquals("[save_ckpt_after_run@after_run/20]", hooks.at(HookPosition.AFTER_RUN).toString());
        assertEquals(List.of(), hooks.at(HookPosition.BEFORE_RUN), "an empty load path builds no hook");
        assertEquals("[trace@before_iter/100]", hooks.at(HookPosition.BEFORE_ITER).toString(),
            "a full form defaults to priority 100");
        CALLS.clear();
        hooks.call(HookPosition.BEFORE_ITER, null);
        assertEquals(List.of("hello"), CALLS);
        assertTrue(HookRegistry.types().containsAll(List.of("load_ckpt", "log_reduce", "log_show", "save_ckpt")));
    }
}
