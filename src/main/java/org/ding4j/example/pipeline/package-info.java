/** What every algorithm's pipeline shares: the summary file and the resume of a restarted attempt. */
package org.ding4j.example.pipeline;
