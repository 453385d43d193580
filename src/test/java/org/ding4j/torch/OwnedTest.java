package org.ding4j.torch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("native")
class OwnedTest
{
    @BeforeAll
    static void init()
    {
        TorchTesting.init();
    }

    @Test
    void shouldOutliveTheScopeItWasCreatedInAndFreeExactlyOnce()
    {
        final Owned<Tensor> owned;
        final Tensor tensor;
        try (PointerScope scope = new PointerScope())
        {
            tensor = torch.ones(4);
            owned = Owned.own("ones", tensor);
        }
        assertFalse(tensor.isNull(), "the scope must not free an owned tensor");
        assertEquals(4.0, owned.get().sum().item_double());
        assertSame(tensor, owned.get());

        owned.close();
        assertTrue(tensor.isNull(), "close frees the native tensor");
        assertTrue(owned.isClosed());
        owned.close();
        final IllegalStateException ex = assertThrows(IllegalStateException.class, owned::get);
        assertEquals("ones is closed", ex.getMessage());
    }

    @Test
    void shouldFreeAnOwnedTensorCreatedOutsideAnyScopeOnClose()
    {
        final Tensor tensor = torch.zeros(2);
        final Owned<Tensor> owned = Owned.own("zeros", tensor);
        owned.close();
        assertTrue(tensor.isNull());
    }

    @Test
    void shouldRejectAFreedPointer()
    {
        final Tensor tensor = torch.zeros(2);
        tensor.close();
        assertThrows(IllegalArgumentException.class, () -> Owned.own("freed", tensor));
    }
}
