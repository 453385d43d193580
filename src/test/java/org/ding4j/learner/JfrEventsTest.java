package org.ding4j.learner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.global.torch;
import org.ding4j.config.Config;
import org.ding4j.config.ConfigFiles;
import org.ding4j.dist.DistGroup;
import org.ding4j.dist.DistInfo;
import org.ding4j.testing.ChildJvm;
import org.ding4j.torch.NativeLoadProbe;
import org.ding4j.torch.Threads;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JFR events on a real recording with the shipped {@code ding4j.jfc}: one Update per update with its counters
 * and times, one Hook per hook call, a Checkpoint per save and load with the file's size, an AllReduce per
 * collective, a NativeLoad per library (in a child JVM: this one has loaded them already).
 */
class JfrEventsTest
{
    @TempDir
    Path dir;

    private static Configuration ding4jSettings() throws Exception
    {
        return Configuration.create(Path.of("target/classes/org/ding4j/jfr/ding4j.jfc"));
    }

    private static List<RecordedEvent> events(final Path file, final String name) throws Exception
    {
        return RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals(name))
            .collect(Collectors.toList());
    }

    @Test
    void aRecordingShouldHoldTheUpdatesHooksCheckpointsAndAllReduces() throws Exception
    {
        Threads.configure();
        final Path file = dir.resolve("run.jfr");
        final Config cfg = ConfigFiles.override(Config.empty(), List.of("hook.log_show_after_iter=2"));
        try (Recording recording = new Recording(ding4jSettings()))
        {
            recording.start();
            try (BaseLearner<Object> learner = new BaseLearner<>(cfg, new CountingPolicy(), null, DistInfo.single(),
                dir.resolve("exp").toString(), "learner"))
            {
                for (int i = 0; i < 3; i++)
                {
                    learner.train(List.of(), 100L + i);
                }
                final Path saved = learner.checkpoints().save("ckpt.pth.tar");
                learner.checkpoints().load(saved);
            }
            try (DistGroup group = DistGroup.join(new DistInfo(0, 1, 0, "127.0.0.1", ChildJvm.freePort(), "jfr"),
                Duration.ofSeconds(30)); PointerScope scope = new PointerScope())
            {
                group.allReduceSum(torch.ones(256), "gradients");
            }
            recording.stop();
            recording.dump(file);
        }
        final List<RecordedEvent> updates = events(file, "org.ding4j.Update");
        assertEquals(3, updates.size());
        for (int i = 0; i < 3; i++)
        {
            final RecordedEvent update = updates.get(i);
            assertEquals(i + 1, update.getLong("update"));
            assertEquals(100 + i, update.getLong("envStep"));
            assertEquals("learner", update.getString("learner"));
            assertTrue(update.getDuration("trainTime").toNanos() > 0);
            assertTrue(update.getDuration().toNanos() > 0);
            assertEquals(0, update.getDuration("dataTime").toNanos());
        }
        // The default after_iter hooks run on every update (log_show reports every 2nd), seeing the update done.
        final List<RecordedEvent> hooks = events(file, "org.ding4j.Hook");
        assertEquals(List.of("log_show 1", "save_ckpt_after_iter 1", "log_show 2", "save_ckpt_after_iter 2",
                "log_show 3", "save_ckpt_after_iter 3"),
            hooks.stream().filter(e -> "after_iter".equals(e.getString("position")))
                .map(e -> e.getString("hook") + " " + e.getLong("update")).collect(Collectors.toList()));
        final List<RecordedEvent> checkpoints = events(file, "org.ding4j.Checkpoint");
        assertEquals(List.of("save", "load"), checkpoints.stream().map(e -> e.getString("operation"))
            .collect(Collectors.toList()));
        final long size = Files.size(dir.resolve("exp/ckpt/ckpt.pth.tar"));
        for (final RecordedEvent checkpoint : checkpoints)
        {
            assertEquals(size, checkpoint.getLong("bytes"));
            assertEquals(3, checkpoint.getLong("update"));
            assertTrue(checkpoint.getString("file").endsWith("ckpt.pth.tar"));
        }
        final List<RecordedEvent> reduces = events(file, "org.ding4j.AllReduce");
        assertEquals(1, reduces.size());
        assertEquals(1024, reduces.get(0).getLong("bytes"));
        assertEquals("gradients", reduces.get(0).getString("purpose"));
    }

    @Test
    void aRecordingFromTheStartShouldHoldEachNativeLoad() throws Exception
    {
        final Path file = dir.resolve("load.jfr");
        final List<String> command = ChildJvm.javaCommand(dir, NativeLoadProbe.class.getName());
        command.add(1, "-XX:StartFlightRecording:settings=target/classes/org/ding4j/jfr/ding4j.jfc,filename=" + file);
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> false);
        assertEquals(0, child.await(120), child.output());
        final List<RecordedEvent> loads = events(file, "org.ding4j.NativeLoad");
        assertEquals(List.of("openblas", "libtorch", "ding4j"), loads.stream().map(e -> e.getString("library"))
            .collect(Collectors.toList()));
        for (final RecordedEvent load : loads)
        {
            assertTrue(load.getDuration().toNanos() > 0, load.toString());
        }
    }

    @Test
    void withoutARecordingNoEventClassShouldEvenLoad() throws Exception
    {
        // Loading the first event class builds JFR's metadata (~60 ms of a start): a JVM that never records must
        // not pay it, through any path that emits an event.
        final List<String> command = ChildJvm.javaCommand(dir, NoRecordingProbe.class.getName());
        command.add(1, "-Xlog:class+load=info:stdout");
        command.add(dir.resolve("exp").toString());
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> false);
        assertEquals(0, child.await(120), child.output());
        assertTrue(child.output().contains("probe done"), child.output());
        assertTrue(child.output().contains("org.ding4j.learner.UpdateCycle "), child.output());
        assertTrue(!child.output().contains("jdk.jfr.Event ")
            && !java.util.regex.Pattern.compile("org\\.ding4j\\.jfr\\.\\w+Event ").matcher(child.output()).find(),
            "an event class was loaded without a recording");
    }

    @Test
    void aRecordingStartedMidRunShouldSeeTheEventsFromThenOn() throws Exception
    {
        final Path file = dir.resolve("late.jfr");
        final List<String> command = ChildJvm.javaCommand(dir, NoRecordingProbe.class.getName());
        command.add(dir.resolve("exp").toString());
        command.add(file.toString());
        final ChildJvm child = ChildJvm.start(0, new ProcessBuilder(command), line -> false);
        assertEquals(0, child.await(120), child.output());
        assertEquals(List.of(4L, 5L, 6L), events(file, "org.ding4j.Update").stream().map(e -> e.getLong("update"))
            .collect(Collectors.toList()));
        assertEquals(List.of(4L, 5L, 6L), events(file, "org.ding4j.Hook").stream()
            .filter(e -> "after_iter".equals(e.getString("position")) && "log_show".equals(e.getString("hook")))
            .map(e -> e.getLong("update")).collect(Collectors.toList()));
        assertEquals(List.of("save"), events(file, "org.ding4j.Checkpoint").stream()
            .map(e -> e.getString("operation")).collect(Collectors.toList()));
    }

    @Test
    void withoutARecordingNoEventShouldBeEnabled()
    {
        // Off by default: what a service that never starts JFR pays is the isEnabled() read.
        assertTrue(!new org.ding4j.jfr.UpdateEvent().isEnabled() && !new org.ding4j.jfr.HookEvent().isEnabled());
    }
}
