package org.ding4j.learner;

import java.nio.file.Path;
import java.util.List;

import org.ding4j.config.Config;
import org.ding4j.dist.DistInfo;
import org.ding4j.torch.Natives;

/**
 * A child JVM of {@link JfrEventsTest}, run without a recording: loads the natives, trains three updates through a
 * learner (hooks, update cycle) and saves and loads a checkpoint, every path that emits a ding4j JFR event.
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
        }
        System.out.println("probe done");
    }
}
