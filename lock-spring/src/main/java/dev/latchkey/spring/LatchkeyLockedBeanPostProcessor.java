package dev.latchkey.spring;

import dev.latchkey.LockKeys;
import dev.latchkey.LockManager;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringValueResolver;

/**
 * Proxies every bean with a {@link LatchkeyLocked @LatchkeyLocked} method (class-based proxies, so
 * beans need no interface), checks each such method at start-up (a valid key, a TTL and a hold-at-least that parse,
 * placeholders resolved) and routes its calls through {@link LatchkeyLockedInterceptor}. Once all
 * singletons exist it fails the start-up if there is an annotated method but no {@link LockManager}.
 *
 * <p>It runs before Spring's {@code @Scheduled} post-processor (order {@link Ordered#HIGHEST_PRECEDENCE}
 * among ordinary post-processors), so the scheduler calls the proxy, not the bare bean.
 */
public class LatchkeyLockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {
    private static final long serialVersionUID = 1L;

    private final transient ObjectProvider<LockManager> locks;
    private final transient Supplier<LatchkeyProperties> properties;
    /** The bean factory's resolver of {@code ${…}} and {@code #{…}}; set with the bean factory. */
    private transient StringValueResolver values;
    /** The first annotated method seen, for the start-up check. */
    private volatile String firstAnnotated;

    public LatchkeyLockedBeanPostProcessor(ObjectProvider<LockManager> locks, Supplier<LatchkeyProperties> properties) {
        this.locks = locks;
        this.properties = properties;
        setProxyTargetClass(true);
        setBeforeExistingAdvisors(true);
        setOrder(Ordered.HIGHEST_PRECEDENCE);
    }

    /** The advice needs the bean factory's value resolver, so it is made here (as Spring's {@code @Async} post-processor makes its own). */
    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        values = new EmbeddedValueResolver((ConfigurableBeanFactory) beanFactory);
        AnnotationMatchingPointcut pointcut = new AnnotationMatchingPointcut(null, LatchkeyLocked.class, true);
        this.advisor = new DefaultPointcutAdvisor(pointcut, new LatchkeyLockedInterceptor(locks::getObject, properties, values));
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
        try {
            LockKeys.validate(LatchkeyLockedInterceptor.key(spec, values));
            LatchkeyLockedInterceptor.ttl(spec, values);
            LatchkeyLockedInterceptor.holdAtLeast(spec, values);
        } catch (IllegalArgumentException e) { // also an unresolvable placeholder
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
    }
}
