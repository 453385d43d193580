package org.ding4j.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;

import org.junit.jupiter.api.Assumptions;

/**
 * The gate of the tests that cross-check against real Python packages: skip with a message where the interpreter
 * cannot import the module, or fail where the environment variable that CI sets says it must be there.
 */
public final class PythonModule
{
    private PythonModule()
    {
    }

    /**
     * @param python     the interpreter (a path, or a name on the PATH)
     * @param module     what it must import
     * @param requireEnv set (by CI) to turn the skip into a failure
     * @param what       the tests' name in the skip message (e.g. "PyTorch interop")
     * @param install    how to install the module, for the skip message
     * @throws InterruptedException if interrupted while the interpreter runs
     */
    public static void require(final String python, final String module, final String requireEnv, final String what,
        final String install) throws InterruptedException
    {
        boolean available;
        try
        {
            available = 0 == new ProcessBuilder(python, "-c", "import " + module).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
        }
        catch (final IOException ex)
        {
            // No such interpreter.
            available = false;
        }
        if (available)
        {
            return;
        }
        if (null != System.getenv(requireEnv))
        {
            fail(requireEnv + " is set but " + python + " cannot import " + module);
        }
        Assumptions.abort(what + " skipped: " + python + " cannot import " + module + " (" + install + " to run it)");
    }
}
