package org.ding4j.data;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.pytorch.Device;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;

/**
 * Moves a batch to the policy's device; the {@link AsyncDataLoader} applies it on its producer thread, so the copy
 * happens while the learner still trains on the previous batch (DI-engine's loader does the same on its CUDA
 * thread). Once a transfer has returned, the loader owns the result and the source's batch is no longer used.
 *
 * @param <T> the batch type
 */
@FunctionalInterface
public interface DeviceTransfer<T>
{
    /**
     * @param batch a batch from the source (after the chunks were joined)
     * @return the batch on the device
     * @throws Exception any failure; it reaches the learner's next {@code next()} call
     */
    T apply(T batch) throws Exception;

    /**
     * @param <T> the batch type
     * @return the transfer that leaves batches where they are (the policy runs on the CPU)
     */
    static <T> DeviceTransfer<T> none()
    {
        return batch -> batch;
    }

    /**
     * DI-engine's {@code to_device} for the given libtorch device: walks the batch, copying every {@link Tensor}
     * (also inside {@link List}s and {@link Map} values, which come back as new mutable containers in the same order)
     * to the device and leaving other values as they are. A tensor that was copied is closed at once, so its host
     * memory does not wait for the garbage collector; one already on the device is kept. The copy is synchronous on
     * the loader's thread: the batch is on the device before the learner can take it. "cpu" needs no walk at all.
     *
     * @param <T>    the batch type (tensors, lists and maps of them, or plain values)
     * @param device a libtorch device string: {@code cpu}, {@code cuda}, {@code cuda:N}, {@code meta}, ...
     * @return the transfer
     * @throws IllegalArgumentException naming the device if libtorch does not know it, or if it is a CUDA device and
     *                                  libtorch sees no CUDA here (a CPU build, or no GPU)
     */
    @SuppressWarnings("unchecked")
    static <T> DeviceTransfer<T> forDevice(final String device)
    {
        if (null == device || "cpu".equals(device))
        {
            return none();
        }
        final Device target;
        try
        {
            target = new Device(device);
        }
        catch (final RuntimeException ex)
        {
            throw new IllegalArgumentException("device: " + device + " is not a libtorch device (cpu, cuda, cuda:N, "
                + "meta, ...): " + ex.getMessage(), ex);
        }
        if (target.is_cuda() && !torch.cuda_is_available())
        {
            throw new IllegalArgumentException("device: " + device + " needs CUDA, and libtorch sees none here (build "
                + "with -Pgpu on a machine with a GPU, or use cpu)");
        }
        if (target.is_cpu())
        {
            return none();
        }
        return batch -> (T)move(batch, target);
    }

    private static Object move(final Object value, final Device device)
    {
        if (value instanceof Tensor tensor)
        {
            if (tensor.device().equals(device))
            {
                return tensor;
            }
            final Tensor moved = tensor.to(device, tensor.scalar_type());
            tensor.close();
            return moved;
        }
        if (value instanceof List<?> list)
        {
            final List<Object> out = new ArrayList<>(list.size());
            for (final Object element : list)
            {
                out.add(move(element, device));
            }
            return out;
        }
        if (value instanceof Map<?, ?> map)
        {
            final Map<Object, Object> out = new LinkedHashMap<>(map.size() * 2);
            for (final Map.Entry<?, ?> entry : map.entrySet())
            {
                out.put(entry.getKey(), move(entry.getValue(), device));
            }
            return out;
        }
        return value;
    }
}
