/** The JavaCPP properties class of ding4j's native library (one per native library). */
package org.ding4j.torch.presets;
