package org.ding4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import org.ding4j.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ding4j train} with the JVM's JMX agent on registers the learner's bean (the agent once served only the
 * JVM's own beans): a JMX client finds it and reads the update count while the run trains.
 */
class TrainJmxTest
{
    @TempDir
    Path dir;

    @Test
    void aTrainRunWithJmxShouldServeItsLearnersBean() throws Exception
    {
        final int port = ChildJvm.freePort();
        final List<String> command = ChildJvm.javaCommand(dir, Main.class.getName());
        command.addAll(1, List.of("-Dcom.sun.management.jmxremote.port=" + port,
            "-Dcom.sun.management.jmxremote.authenticate=false", "-Dcom.sun.management.jmxremote.ssl=false",
            "-Dcom.sun.management.jmxremote.host=127.0.0.1"));
        command.addAll(List.of("train", "--set", "exp_name=" + dir.resolve("jmx"), "--set", "env.stop_value=1000",
            "--set", "pipeline.max_env_step=100000000"));
        final ChildJvm run = ChildJvm.start(0, new ProcessBuilder(command), line -> line.startsWith("env steps "));
        try
        {
            assertTrue(run.reached.await(120, TimeUnit.SECONDS), run::output);
            try (JMXConnector client = JMXConnectorFactory.connect(new JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi")))
            {
                final MBeanServerConnection server = client.getMBeanServerConnection();
                final Set<ObjectName> names = server.queryNames(new ObjectName("org.ding4j:type=Learner,*"), null);
                assertEquals(1, names.size(), names::toString);
                assertTrue(((Number)server.getAttribute(names.iterator().next(), "Updates")).longValue() >= 0);
            }
        }
        finally
        {
            new ProcessBuilder("kill", "-TERM", Long.toString(run.process.pid())).start().waitFor();
            assertTrue(run.process.waitFor(60, TimeUnit.SECONDS), run::output);
        }
        assertEquals(0, run.process.exitValue(), run::output);
    }
}
