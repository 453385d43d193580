package org.ding4j.torch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Tensor;

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
     * Compares a state dict with the keys and shapes a model has, as PyTorch's strict {@code load_state_dict} does,
     * touching nothing.
     *
     * @param expected each key the model has, with its shape, in order
     * @param source   the state dict
     * @return what did not match (empty when everything fits)
     */
    public static StateDictReport compare(final Map<String, long[]> expected, final Map<?, ?> source)
    {
        final List<String> missing = new ArrayList<>();
        final List<String> mismatched = new ArrayList<>();
        for (final Map.Entry<String, long[]> key : expected.entrySet())
        {
            final Object value = source.get(key.getKey());
            if (!source.containsKey(key.getKey()))
            {
                missing.add(key.getKey());
            }
            else if (!fits(key.getValue(), value))
            {
                mismatched.add(key.getKey() + ": checkpoint has " + describe(value) + ", the model "
                    + Arrays.toString(key.getValue()));
            }
        }
        final List<String> unexpected = new ArrayList<>();
        for (final Object key : source.keySet())
        {
            if (!expected.containsKey(String.valueOf(key)))
            {
                unexpected.add(String.valueOf(key));
            }
        }
        return new StateDictReport(missing, unexpected, mismatched);
    }

    /**
     * @param shape a parameter's shape
     * @param value a state dict's value for it
     * @return whether the value is a tensor of that shape
     */
    public static boolean fits(final long[] shape, final Object value)
    {
        return value instanceof Tensor t && Arrays.equals(shape, t.sizes().vec().get());
    }

    private static String describe(final Object value)
    {
        return value instanceof Tensor t ? "shape " + Checks.shape(t)
            : "a " + (null == value ? "None" : value.getClass().getSimpleName()) + ", not a tensor";
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
        final StateDictReport report = compare(expected, model);
        if (!report.isEmpty())
        {
            throw new IllegalArgumentException(owner + " state dict: its 'model' is another net's (" + report
                + "): a checkpoint of another algorithm or net size?");
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
