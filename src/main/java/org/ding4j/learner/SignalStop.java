package org.ding4j.learner;

import java.util.ArrayList;
import java.util.List;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGINT/SIGTERM handlers while something trains ({@link StopSignals} installs them once for all runs in flight):
 * the handler only runs a flag-setting action (on the JVM's signal thread), so nothing is saved from inside a
 * handler; {@link #restore()} puts the previous handlers back. Where the platform refuses a signal (e.g. the JVM was
 * started with {@code -Xrs}), it is left alone.
 */
final class SignalStop
{
    private static final String[] SIGNALS = {"INT", "TERM"};

    private final List<Signal> signals = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();

    private SignalStop()
    {
    }

    /**
     * @param onSignal what a signal does: set a flag (it runs on the JVM's signal thread)
     * @return the installed handlers; {@link #restore()} them when the loop ends
     */
    static SignalStop install(final Runnable onSignal)
    {
        final SignalStop stop = new SignalStop();
        final SignalHandler handler = signal -> onSignal.run();
        for (final String name : SIGNALS)
        {
            try
            {
                final Signal signal = new Signal(name);
                stop.previous.add(Signal.handle(signal, handler));
                stop.signals.add(signal);
            }
            catch (final IllegalArgumentException ex)
            {
                // The JVM reserves this signal here; the default behaviour stays.
            }
        }
        return stop;
    }

    /** Puts the handlers that were there before back. */
    void restore()
    {
        for (int i = 0; i < signals.size(); i++)
        {
            Signal.handle(signals.get(i), previous.get(i));
        }
    }
}
