package org.ding4j.torch;

import java.util.List;

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
