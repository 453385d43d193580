package org.ding4j.torch;

import java.util.ArrayList;
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
     * Refuses a model section that is another net's (other keys, or the same keys with other shapes), before anything
     * else of a checkpoint is checked: one saved by another algorithm or with other widths would otherwise be refused
     * for what it lacks besides (its optimizer state, say), and the advice for that would lead nowhere.
     *
     * @param owner    who loads, for the message ({@code "DQN"})
     * @param expected each key the model section must have, with its shape, in order
     * @param model    the checkpoint's model section
     * @throws IllegalArgumentException listing the missing, unexpected and mismatched keys, if any
     */
    public static void requireSameModel(final String owner, final Map<String, long[]> expected, final Map<?, ?> model)
    {
        final List<String> missing = new ArrayList<>();
        final List<String> mismatched = new ArrayList<>();
        for (final Map.Entry<String, long[]> key : expected.entrySet())
        {
            final Object value = model.get(key.getKey());
            if (!model.containsKey(key.getKey()))
            {
                missing.add(key.getKey());
            }
            else if (value instanceof org.bytedeco.pytorch.Tensor t
                && !java.util.Arrays.equals(key.getValue(), t.sizes().vec().get()))
            {
                mismatched.add(key.getKey() + ": checkpoint has " + java.util.Arrays.toString(t.sizes().vec().get())
                    + ", the model " + java.util.Arrays.toString(key.getValue()));
            }
        }
        final List<String> unexpected = new ArrayList<>();
        for (final Object key : model.keySet())
        {
            if (!expected.containsKey(String.valueOf(key)))
            {
                unexpected.add(String.valueOf(key));
            }
        }
        if (!missing.isEmpty() || !unexpected.isEmpty() || !mismatched.isEmpty())
        {
            throw new IllegalArgumentException(owner + " state dict: its 'model' is another net's ("
                + new StateDictReport(missing, unexpected, mismatched) + "): a checkpoint of another algorithm or "
                + "net size?");
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
