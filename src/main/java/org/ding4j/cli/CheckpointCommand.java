package org.ding4j.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.CheckpointInspector;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.torch.Natives;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code ding4j checkpoint ...}: tools for checkpoint files. */
@Command(name = "checkpoint", mixinStandardHelpOptions = true, description = "Work with checkpoint files.",
    subcommands = CheckpointCommand.Inspect.class)
final class CheckpointCommand implements Callable<Integer>
{
    @Spec
    private picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        return Main.usage(spec);
    }

    /** {@code ding4j checkpoint inspect FILE}: the tree as JSON, tensors as path, dtype, shape, sum and first. */
    @Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Print a checkpoint (torch.save format) as JSON: each tensor's key path, dtype, shape, "
            + "sum and first value; plain values as they are.")
    static final class Inspect implements Callable<Integer>
    {
        @Parameters(paramLabel = "FILE", description = "a .pth.tar file written by ding4j or torch.save")
        private Path file;

        @Spec
        private picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception
        {
            Natives.load();
            try (PointerScope scope = new PointerScope())
            {
                final PrintWriter out = spec.commandLine().getOut();
                out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                    .writeValueAsString(CheckpointInspector.describe(new TorchCheckpointIO().read(file))));
                out.flush();
            }
            return 0;
        }
    }
}
