package org.ding4j.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** Where a rank finds its place: torchrun's variables first, then SLURM's, then one process. */
class DistInfoTest
{
    @Test
    void torchrunVariablesShouldGiveThePlace()
    {
        assertEquals(new DistInfo(3, 8, 1, "10.0.0.1", 29400, "job7"), DistInfo.fromEnvironment(Map.of("RANK", "3",
            "WORLD_SIZE", "8", "LOCAL_RANK", "1", "MASTER_ADDR", "10.0.0.1", "MASTER_PORT", "29400",
            "TORCHELASTIC_RUN_ID", "job7")));
    }

    @Test
    void anSrunTaskShouldTakeItsPlaceFromSlurm()
    {
        final DistInfo info = DistInfo.fromEnvironment(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "8",
            "SLURM_LOCALID", "1", "SLURM_JOB_NODELIST", "gpu[07-10,12],cpu3", "SLURM_JOB_ID", "4242"));
        assertEquals(new DistInfo(5, 8, 1, "gpu07", DistInfo.DEFAULT_MASTER_PORT, "slurm-4242"), info);
    }

    @Test
    void torchrunUnderSlurmShouldWinOverSlurm()
    {
        final DistInfo info = DistInfo.fromEnvironment(Map.of("RANK", "0", "WORLD_SIZE", "2", "LOCAL_RANK", "0",
            "MASTER_ADDR", "head", "SLURM_PROCID", "1", "SLURM_NTASKS", "1", "SLURM_JOB_NODELIST", "n[1-2]"));
        assertEquals(new DistInfo(0, 2, 0, "head", DistInfo.DEFAULT_MASTER_PORT, ""), info);
    }

    @Test
    void slurmHostListsShouldGiveTheirFirstHost()
    {
        assertEquals("node01", DistInfo.firstHost("node[01-04]"));
        assertEquals("node7", DistInfo.firstHost("node[7,9-11]"));
        assertEquals("a", DistInfo.firstHost("a,b[1-3]"));
        assertEquals("single", DistInfo.firstHost("single"));
        for (final String bad : new String[] {"[1-2]", "node[-3]", "node[x1]", ",a"})
        {
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DistInfo.firstHost(bad));
            assertTrue(e.getMessage().startsWith("SLURM_JOB_NODELIST: expected a host list")
                && e.getMessage().contains(bad), e.getMessage());
        }
    }

    @Test
    void aBadVariableShouldBeNamed()
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> DistInfo.fromEnvironment(Map.of("SLURM_PROCID", "two", "SLURM_NTASKS", "4")));
        assertEquals("SLURM_PROCID: expected an integer, got \"two\"", e.getMessage());
        final IllegalArgumentException range = assertThrows(IllegalArgumentException.class,
            () -> DistInfo.fromEnvironment(Map.of("SLURM_PROCID", "4", "SLURM_NTASKS", "4")));
        assertTrue(range.getMessage().contains("got 4"), range.getMessage());
    }

    @Test
    void torchrunsAgentStoreShouldBeUsedUnderItsPrefixForTheAttempt()
    {
        assertEquals("/worker/attempt_2", DistInfo.fromEnvironment(Map.of("RANK", "1", "WORLD_SIZE", "2",
            "TORCHELASTIC_USE_AGENT_STORE", "True", "TORCHELASTIC_RESTART_COUNT", "2")).agentStore());
        assertEquals("", DistInfo.fromEnvironment(Map.of("TORCHELASTIC_USE_AGENT_STORE", "False")).agentStore());
    }
}
