package dev.latchkey.spring;

import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies every bean with a {@link LatchkeyLocked @LatchkeyLocked} method (class-based proxies, so
 * beans need no interface), checks each such method at start-up (returns {@code void}, a valid key, a
 * TTL that parses) and routes its calls through {@link LatchkeyLockedInterceptor}. Once all
 * singletons exist it fails the start-up if there is an annotated method but no {@link LockManager}.
 *
 * <p>It runs before Spring's {@code @Scheduled} post-processor (order {@link Ordered#HIGHEST_PRECEDENCE}
 * among ordinary post-processors), so the scheduler calls the proxy, not the bare bean.
 */
public class LatchkeyLockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {
    private static final long serialVersionUID = 1L;

    private final transient ObjectProvider<LockManager> locks;
    /** The first annotated method seen, for the start-up check. */
    private volatile String firstAnnotated;

    public LatchkeyLockedBeanPostProcessor(ObjectProvider<LockManager> locks, Supplier<LatchkeyProperties> properties) {
        this.locks = locks;
        AnnotationMatchingPointcut pointcut = new AnnotationMatchingPointcut(null, LatchkeyLocked.class, true);
        this.advisor = new DefaultPointcutAdvisor(pointcut, new LatchkeyLockedInterceptor(locks::getObject, properties));
        setProxyTargetClass(true);
        setBeforeExistingAdvisors(true);
        setOrder(Ordered.HIGHEST_PRECEDENCE);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopProxyUtils.ultimateTargetClass(bean);
        ReflectionUtils.doWithMethods(type, method -> check(beanName, method),
                method -> AnnotatedElementUtils.hasAnnotation(method, LatchkeyLocked.class));
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** Once every singleton exists: annotated methods need a manager, or they could only fail at each run. */
    @Override
    public void afterSingletonsInstantiated() {
        if (firstAnnotated != null && locks.getIfAvailable() == null) {
            throw new IllegalStateException(firstAnnotated + " needs a Latchkey LockManager: set latchkey.uri "
                    + "(e.g. latchkey.uri=postgres://app@db/app) or define a LockManager bean");
        }
    }

    private void check(String beanName, Method method) {
        LatchkeyLocked spec = AnnotatedElementUtils.findMergedAnnotation(method, LatchkeyLocked.class);
        String where = "@LatchkeyLocked " + method.getDeclaringClass().getSimpleName() + "." + method.getName()
                + " (bean '" + beanName + "')";
        if (firstAnnotated == null) firstAnnotated = where;
        if (method.getReturnType() != void.class) {
            throw new IllegalStateException(where + " must return void: a run skipped because another holder has '"
                    + spec.key() + "' has no result");
        }
        try {
            LockKeys.validate(spec.key());
            LatchkeyLockedInterceptor.ttl(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
    }
}
