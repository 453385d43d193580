package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.ding4j.torch.PackedMlp;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code ding4j info}: the machine's facts, the acting kernel's variant being the one PackedMlp runs here. */
@Tag("native")
class InfoCommandTest
{
    @Test
    void shouldPrintTheLibrariesTheirLoadTimeAndTheActingKernelsVariant()
    {
        final StringWriter out = new StringWriter();
        final Cli cli = Main.commandLine();
        cli.setOut(new PrintWriter(out));
        assertEquals(0, cli.execute("info"));
        final String text = out.toString();
        assertTrue(text.startsWith("ding4j 0.1.0 on Java " + Runtime.version()), text);
        assertTrue(text.matches("(?s).*\\nlibtorch presets [0-9.-]+ \\((CPU|CUDA) build\\), OpenBLAS presets [0-9.-]+: "
            + "loaded in [0-9.]+ s\\n.*"), text);
        final String variant = new String[] {"plain C++", "AVX2+FMA", "AVX-512"}[PackedMlp.widestVariant()];
        assertTrue(text.contains("acting kernel (PackedMlp): " + variant + "\n"), text);
    }
}
