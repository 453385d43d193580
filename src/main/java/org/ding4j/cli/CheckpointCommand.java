package org.ding4j.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.bytedeco.javacpp.PointerScope;
import org.ding4j.checkpoint.CheckpointInspector;
import org.ding4j.checkpoint.CorruptCheckpointException;
import org.ding4j.checkpoint.TorchCheckpointIO;
import org.ding4j.torch.Natives;

/** {@code ding4j checkpoint ...}: tools for checkpoint files. */
final class CheckpointCommand
{
    private CheckpointCommand()
    {
    }

    /** @return the {@code checkpoint} command's declaration, with {@code inspect} */
    static Cli.Command command()
    {
        return new Cli.Command("checkpoint", "Work with checkpoint files.")
            .subcommand(new Cli.Command("inspect", "Print a checkpoint (torch.save format) as JSON: each tensor's key "
                + "path, dtype, shape, sum and first value; plain values as they are.")
                .parameter("FILE", "a .pth.tar file written by ding4j or torch.save")
                .action(args -> inspect(args.pathAt(0), args.out())));
    }

    /**
     * {@code ding4j checkpoint inspect FILE}: the tree as JSON, tensors as path, dtype, shape, sum and first. A file
     * that is missing or not a checkpoint is bad input (exit 2), as for {@code eval --ckpt}.
     */
    private static int inspect(final Path file, final PrintWriter out) throws IOException
    {
        if (!Files.exists(file))
        {
            throw new IllegalArgumentException("FILE: " + file + " does not exist");
        }
        Natives.load();
        try (PointerScope scope = new PointerScope())
        {
            out.println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                .writeValueAsString(CheckpointInspector.describe(new TorchCheckpointIO().read(file))));
            out.flush();
        }
        catch (final CorruptCheckpointException ex)
        {
            throw new IllegalArgumentException(ex.getMessage(), ex);
        }
        return 0;
    }
}
