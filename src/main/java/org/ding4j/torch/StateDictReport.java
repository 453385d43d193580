package org.ding4j.torch;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What a state-dict load found that did not match the model, as PyTorch's {@code load_state_dict} reports it.
 *
 * @param missing    model keys the state dict lacks
 * @param unexpected state-dict keys the model does not have
 * @param mismatched keys present in both whose shapes (or types) differ, each with both shapes
 */
public record StateDictReport(List<String> missing, List<String> unexpected, List<String> mismatched)
{
    /** Copies the lists so that the report cannot change after the load. */
    public StateDictReport
    {
        missing = List.copyOf(missing);
        unexpected = List.copyOf(unexpected);
        mismatched = List.copyOf(mismatched);
    }

    /**
     * Refuses a model section whose keys are another net's, before anything else of a checkpoint is checked: one
     * saved by another algorithm would otherwise be refused for what it lacks besides (its optimizer state, say), and
     * the advice for that would lead nowhere.
     *
     * @param owner    who loads, for the message ({@code "DQN"})
     * @param expected the keys the model section must have
     * @param model    the checkpoint's model section
     * @throws IllegalArgumentException listing the missing and the unexpected keys, if they differ
     */
    public static void requireSameKeys(final String owner, final Collection<String> expected, final Map<?, ?> model)
    {
        final List<String> missing = new ArrayList<>();
        for (final String key : expected)
        {
            if (!model.containsKey(key))
            {
                missing.add(key);
            }
        }
        final List<String> unexpected = new ArrayList<>();
        for (final Object key : model.keySet())
        {
            if (!expected.contains(String.valueOf(key)))
            {
                unexpected.add(String.valueOf(key));
            }
        }
        if (!missing.isEmpty() || !unexpected.isEmpty())
        {
            throw new IllegalArgumentException(owner + " state dict: its 'model' is another net's ("
                + new StateDictReport(missing, unexpected, List.of()) + "): a checkpoint of another algorithm or net "
                + "size?");
        }
    }

    /** @return whether every key matched */
    public boolean isEmpty()
    {
        return missing.isEmpty() && unexpected.isEmpty() && mismatched.isEmpty();
    }

    @Override
    public String toString()
    {
        return "missing keys " + missing + ", unexpected keys " + unexpected + ", mismatched " + mismatched;
    }
}
