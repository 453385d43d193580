package org.ding4j.cli;

/**
 * A child JVM's main for {@link ClassDataArchiveTest}: loads a few classes, prints what it does with an archive, then
 * marks the one it writes complete, or with the argument {@code fail} exits 1 first, as a failed run does.
 */
public final class ArchiveProbe
{
    private ArchiveProbe()
    {
    }

    /**
     * @param args {@code fail} to exit 1 without the mark
     */
    public static void main(final String[] args)
    {
        System.out.println("probe running, " + new java.util.concurrent.ConcurrentSkipListMap<String, Integer>().size());
        System.out.println("status: " + ClassDataArchive.status());
        if (args.length > 0 && "fail".equals(args[0]))
        {
            System.exit(1);
        }
        System.out.println("marked: " + ClassDataArchive.markComplete());
    }
}
