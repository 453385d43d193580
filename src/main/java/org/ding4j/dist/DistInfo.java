package org.ding4j.dist;

import java.util.Map;

/**
 * A process's place in a distributed job, with torchrun's names: global {@code RANK} and {@code WORLD_SIZE}, the
 * node-local {@code LOCAL_RANK} (which selects the device: a global rank is not a device index, DI-engine#875), and
 * the rendezvous {@code MASTER_ADDR}:{@code MASTER_PORT} where rank 0 hosts the store, and the job's identity
 * ({@code DING4J_JOB_ID}, else torchrun's {@code TORCHELASTIC_RUN_ID}, as torchrun's {@code rdzv_id}) that every
 * rank checks at the rendezvous, so a rank of another job on the same port is refused before any collective.
 *
 * @param rank       0-based global rank, below worldSize
 * @param worldSize  number of ranks, >= 1
 * @param localRank  0-based rank on this node (the device index), below worldSize
 * @param masterAddr host of rank 0's store
 * @param masterPort its TCP port, 1-65535
 * @param jobId      the job's identity; empty when none was given (then only the world size is checked)
 */
public record DistInfo(int rank, int worldSize, int localRank, String masterAddr, int masterPort, String jobId)
{
    /** torchrun's default rendezvous address. */
    public static final String DEFAULT_MASTER_ADDR = "127.0.0.1";
    /** torchrun's default rendezvous port. */
    public static final int DEFAULT_MASTER_PORT = 29500;
    /** The environment variable of the job's identity that {@code ding4j launch} sets for its ranks. */
    public static final String JOB_ID_VARIABLE = "DING4J_JOB_ID";

    /**
     * @throws IllegalArgumentException naming the value if worldSize is below 1, rank or localRank is outside
     *                                  [0, worldSize), the address is empty or the port is outside 1-65535
     */
    public DistInfo
    {
        if (worldSize < 1)
        {
            throw new IllegalArgumentException("world_size: expected >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("rank: expected 0 <= rank < world_size=" + worldSize + ", got " + rank);
        }
        if (localRank < 0 || localRank >= worldSize)
        {
            throw new IllegalArgumentException("local_rank: expected 0 <= local_rank < world_size=" + worldSize
                + ", got " + localRank);
        }
        if (null == masterAddr || masterAddr.isBlank())
        {
            throw new IllegalArgumentException("master_addr: expected a host name or address, got \"" + masterAddr
                + "\"");
        }
        if (masterPort < 1 || masterPort > 65535)
        {
            throw new IllegalArgumentException("master_port: expected 1-65535, got " + masterPort);
        }
        if (null == jobId || jobId.chars().anyMatch(c -> c < 0x21 || c > 0x7e))
        {
            throw new IllegalArgumentException("job_id: expected printable ASCII without spaces, got \"" + jobId + "\"");
        }
    }

    /**
     * A place in a job without an identity.
     *
     * @param rank       global rank
     * @param worldSize  number of ranks
     * @param localRank  rank on this node
     * @param masterAddr host of rank 0's store
     * @param masterPort its port
     */
    public DistInfo(final int rank, final int worldSize, final int localRank, final String masterAddr,
        final int masterPort)
    {
        this(rank, worldSize, localRank, masterAddr, masterPort, "");
    }

    /**
     * One node: the local rank is the rank, the store at torchrun's default address.
     *
     * @param rank      global rank
     * @param worldSize number of ranks
     */
    public DistInfo(final int rank, final int worldSize)
    {
        this(rank, worldSize, rank, DEFAULT_MASTER_ADDR, DEFAULT_MASTER_PORT);
    }

    /** @return rank 0 of 1 */
    public static DistInfo single()
    {
        return new DistInfo(0, 1);
    }

    /** @return whether there is more than one rank */
    public boolean distributed()
    {
        return worldSize > 1;
    }

    /**
     * @param environment the process environment ({@code System.getenv()})
     * @return the place from {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code MASTER_ADDR},
     *         {@code MASTER_PORT} and {@code DING4J_JOB_ID} (or {@code TORCHELASTIC_RUN_ID}), defaulting to 0, 1, RANK,
     *         127.0.0.1, 29500 and none
     * @throws IllegalArgumentException naming the variable if one is not an integer or out of range
     */
    public static DistInfo fromEnvironment(final Map<String, String> environment)
    {
        final int rank = integer(environment, "RANK", 0);
        final String addr = environment.get("MASTER_ADDR");
        return new DistInfo(rank, integer(environment, "WORLD_SIZE", 1), integer(environment, "LOCAL_RANK", rank),
            null == addr || addr.isBlank() ? DEFAULT_MASTER_ADDR : addr.trim(),
            integer(environment, "MASTER_PORT", DEFAULT_MASTER_PORT), jobId(environment));
    }

    private static String jobId(final Map<String, String> environment)
    {
        final String own = environment.get(JOB_ID_VARIABLE);
        final String torchrun = environment.get("TORCHELASTIC_RUN_ID");
        return null != own && !own.isBlank() ? own.trim() : null != torchrun && !torchrun.isBlank()
            ? torchrun.trim() : "";
    }

    private static int integer(final Map<String, String> environment, final String name, final int fallback)
    {
        final String value = environment.get(name);
        if (null == value || value.isBlank())
        {
            return fallback;
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(name + ": expected an integer, got \"" + value + "\"", ex);
        }
    }
}
