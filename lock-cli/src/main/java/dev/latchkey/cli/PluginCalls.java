package dev.latchkey.cli;

import dev.latchkey.Lease;
import dev.latchkey.LockManager;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Optional;

/**
 * A plugin's manager, and the leases it hands out, as the command calls them: every call goes
 * through one {@link Around} (the plugin's class loader as context loader, and a class the plugin
 * lacks — found missing only now, after open — reported as the plugin's error, not latchkey's
 * internal one). The objects behave as the plugin's own otherwise: results, exceptions and
 * default methods pass through unchanged.
 */
final class PluginCalls {
    private PluginCalls() {}

    /** A call into the plugin. */
    interface Call<T> {
        T call() throws Throwable;
    }

    /** What every call into the plugin runs inside. */
    interface Around {
        Object run(Call<Object> call) throws Throwable;
    }

    /** {@code target} behind a proxy of {@code type} whose calls, and those of the leases it returns, go through {@code around}. */
    static <T> T wrap(T target, Class<T> type, Around around) {
        return type.cast(Proxy.newProxyInstance(PluginCalls.class.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) return invoke(method, target, args);
                    return leasesWrapped(around.run(() -> invoke(method, target, args)), around);
                }));
    }

    private static Object leasesWrapped(Object result, Around around) {
        if (result instanceof Lease lease) return wrap(lease, Lease.class, around);
        if (result instanceof Optional<?> o && o.isPresent() && o.get() instanceof Lease lease) {
            return Optional.of(wrap(lease, Lease.class, around));
        }
        return result;
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
