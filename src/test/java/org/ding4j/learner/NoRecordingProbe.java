package org.ding4j.learner;

import java.nio.file.Path;
import java.util.List;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.torch.Natives;

/**
 * A child JVM of {@link JfrEventsTest}, started without a recording: loads the natives, trains three updates through
 * a learner (hooks, update cycle) and saves and loads a checkpoint, every path that emits a ding4j JFR event. With a
 * second argument (a file) it then starts a recording with {@code ding4j.jfc}, trains three more updates, saves a
 * checkpoint and dumps the recording there: a recording started mid-run sees the events from then on.
 */
public final class NoRecordingProbe
{
    private NoRecordingProbe()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        Natives.load();
        try (BaseLearner<Object> learner = new BaseLearner<>(Config.empty(), new CountingPolicy(), null,
            DistInfo.single(), Path.of(args[0]).toString(), "learner"))
        {
            for (int i = 0; i < 3; i++)
            {
                learner.train(List.of(), 100L + i);
            }
            learner.checkpoints().load(learner.checkpoints().save("ckpt.pth.tar"));
            if (args.length > 1)
            {
                try (Recording recording = new Recording(
                    Configuration.create(Path.of("target/classes/org/ding4j/jfr/ding4j.jfc"))))
                {
                    recording.start();
                    for (int i = 3; i < 6; i++)
                    {
                        learner.train(List.of(), 100L + i);
                    }
                    learner.checkpoints().save("ckpt.pth.tar");
                    recording.stop();
                    recording.dump(Path.of(args[1]));
                }
            }
        }
        System.out.println("probe done");
    }
}
