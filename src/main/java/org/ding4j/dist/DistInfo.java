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
 * @param agentStore the key prefix under which torchrun's agent, which hosts the store at the master address itself
 *                   ({@code TORCHELASTIC_USE_AGENT_STORE=True}), lets its workers rendezvous
 *                   ({@code /worker/attempt_<restart count>}); empty when ding4j's rank 0 hosts the store
 */
public record DistInfo(int rank, int worldSize, int localRank, String masterAddr, int masterPort, String jobId,
    String agentStore)
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
        java.util.Objects.requireNonNull(agentStore, "agentStore");
    }

    /**
     * A place whose rank 0 hosts the store.
     *
     * @param rank       global rank
     * @param worldSize  number of ranks
     * @param localRank  rank on this node
     * @param masterAddr host of rank 0's store
     * @param masterPort its port
     * @param jobId      the job's identity, or empty
     */
    public DistInfo(final int rank, final int worldSize, final int localRank, final String masterAddr,
        final int masterPort, final String jobId)
    {
        this(rank, worldSize, localRank, masterAddr, masterPort, jobId, "");
    }

    /** @return whether torchrun's agent hosts the store (then no rank hosts one) */
    public boolean usesAgentStore()
    {
        return !agentStore.isEmpty();
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
     * The place from torchrun's variables, else SLURM's (an {@code srun} task without torchrun), else one process.
     * torchrun's: {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code MASTER_ADDR}, {@code MASTER_PORT}.
     * SLURM's, used for whichever of those is unset: {@code SLURM_PROCID}, {@code SLURM_NTASKS},
     * {@code SLURM_LOCALID}, and the first host of {@code SLURM_JOB_NODELIST} (e.g. {@code node01} of
     * {@code node[01-04,07],gpu5}) as the master address. The job's identity: {@code DING4J_JOB_ID}, else
     * {@code TORCHELASTIC_RUN_ID}, else {@code SLURM_JOB_ID}. Defaults: 0, 1, the rank, 127.0.0.1, 29500, none. With
     * {@code TORCHELASTIC_USE_AGENT_STORE=True} the ranks use torchrun's agent's store ({@link #agentStore()}).
     *
     * @param environment the process environment ({@code System.getenv()})
     * @return the place
     * @throws IllegalArgumentException naming the variable if one is not an integer, out of range or (the node
     *                                  list) not a SLURM host list
     */
    public static DistInfo fromEnvironment(final Map<String, String> environment)
    {
        final int rank = integer(environment, "RANK", integer(environment, "SLURM_PROCID", 0));
        final int world = integer(environment, "WORLD_SIZE", integer(environment, "SLURM_NTASKS", 1));
        final int localRank = integer(environment, "LOCAL_RANK", integer(environment, "SLURM_LOCALID", rank));
        final String addr = text(environment, "MASTER_ADDR");
        final String nodes = text(environment, "SLURM_JOB_NODELIST");
        final String master = null != addr ? addr : null != nodes ? firstHost(nodes) : DEFAULT_MASTER_ADDR;
        // torchrun's static rendezvous: its agent hosts the store, and its workers use it under a prefix per attempt
        // (torch.distributed's env:// rendezvous does the same).
        final String agent = "true".equalsIgnoreCase(text(environment, "TORCHELASTIC_USE_AGENT_STORE"))
            ? "/worker/attempt_" + integer(environment, "TORCHELASTIC_RESTART_COUNT", 0) : "";
        return new DistInfo(rank, world, localRank, master,
            integer(environment, "MASTER_PORT", DEFAULT_MASTER_PORT), jobId(environment), agent);
    }

    /**
     * @param nodeList a SLURM host list ({@code SLURM_JOB_NODELIST}): {@code a,b}, {@code node[01-04,07]}, ...
     * @return its first host, the zero padding kept ({@code node[01-04]} gives {@code node01})
     * @throws IllegalArgumentException naming the value if it is not a host list
     */
    public static String firstHost(final String nodeList)
    {
        final String list = nodeList.trim();
        final int open = list.indexOf('[');
        final int comma = list.indexOf(',');
        if (open < 0 || (comma >= 0 && comma < open))
        {
            final String first = comma < 0 ? list : list.substring(0, comma);
            if (first.isEmpty())
            {
                throw new IllegalArgumentException("SLURM_JOB_NODELIST: expected a host list, got \"" + nodeList
                    + "\"");
            }
            return first;
        }
        final int close = list.indexOf(']', open);
        final String range = close < 0 ? "" : list.substring(open + 1, close).split(",")[0];
        final String start = range.split("-")[0];
        if (0 == open || start.isEmpty() || !start.chars().allMatch(Character::isDigit))
        {
            throw new IllegalArgumentException("SLURM_JOB_NODELIST: expected a host list such as node[01-04,07], got \""
                + nodeList + "\"");
        }
        return list.substring(0, open) + start;
    }

    private static String jobId(final Map<String, String> environment)
    {
        final String own = text(environment, JOB_ID_VARIABLE);
        final String torchrun = text(environment, "TORCHELASTIC_RUN_ID");
        final String slurm = text(environment, "SLURM_JOB_ID");
        return null != own ? own : null != torchrun ? torchrun : null != slurm ? "slurm-" + slurm : "";
    }

    private static String text(final Map<String, String> environment, final String name)
    {
        final String value = environment.get(name);
        return null == value || value.isBlank() ? null : value.trim();
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
