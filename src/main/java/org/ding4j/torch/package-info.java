/** Java owners of libtorch objects, flat parameter buffers, fused optimizers and thread settings. */
package org.ding4j.torch;
