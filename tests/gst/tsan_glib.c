/* Linked into the element's tests in a -Db_sanitize=thread build only.
 *
 * GLib's GMutex and GCond are futex-based on Linux and GLib is not built with
 * ThreadSanitizer, so TSan sees neither a GMutex lock nor the hand-off of a
 * GAsyncQueue: every access the element makes under its GMutex (or GST_OBJECT_LOCK)
 * would be reported as a race.  These definitions take the place of GLib's for every
 * caller outside libglib (the element, GStreamer, libgstcheck: calls across a library
 * boundary go through the PLT), call the real function, and tell TSan what happened.
 * GRecMutex (GStreamer's stream lock) is pthread-based and TSan sees it unaided. */
#include <dlfcn.h>
#include <glib.h>
#include <sanitizer/tsan_interface.h>

typedef void (*mutex_fn)(GMutex *);
typedef gboolean (*trylock_fn)(GMutex *);
typedef void (*wait_fn)(GCond *, GMutex *);
typedef gboolean (*wait_until_fn)(GCond *, GMutex *, gint64);
typedef void (*push_fn)(GAsyncQueue *, gpointer);
typedef gpointer (*pop_fn)(GAsyncQueue *);
typedef gpointer (*timeout_pop_fn)(GAsyncQueue *, guint64);

/* The real function, looked up once (atomically: several threads may get here). */
#define REAL(name, type)                                                               \
    static type cached_##name;                                                         \
    type real_##name = __atomic_load_n(&cached_##name, __ATOMIC_ACQUIRE);              \
    if (!real_##name) {                                                                \
        real_##name = (type)dlsym(RTLD_NEXT, #name);                                   \
        __atomic_store_n(&cached_##name, real_##name, __ATOMIC_RELEASE);               \
    }

void g_mutex_lock(GMutex *m)
{
    REAL(g_mutex_lock, mutex_fn);
    __tsan_mutex_pre_lock(m, 0);
    real_g_mutex_lock(m);
    __tsan_mutex_post_lock(m, 0, 0);
}

gboolean g_mutex_trylock(GMutex *m)
{
    REAL(g_mutex_trylock, trylock_fn);
    __tsan_mutex_pre_lock(m, __tsan_mutex_try_lock);
    gboolean ok = real_g_mutex_trylock(m);
    __tsan_mutex_post_lock(m, __tsan_mutex_try_lock | (ok ? 0 : __tsan_mutex_try_lock_failed),
                           0);
    return ok;
}

void g_mutex_unlock(GMutex *m)
{
    REAL(g_mutex_unlock, mutex_fn);
    __tsan_mutex_pre_unlock(m, 0);
    real_g_mutex_unlock(m);
    __tsan_mutex_post_unlock(m, 0);
}

void g_mutex_clear(GMutex *m)
{
    REAL(g_mutex_clear, mutex_fn);
    __tsan_mutex_destroy(m, 0);
    real_g_mutex_clear(m);
}

/* The wait releases the mutex and takes it again inside libglib. */
void g_cond_wait(GCond *c, GMutex *m)
{
    REAL(g_cond_wait, wait_fn);
    __tsan_mutex_pre_unlock(m, 0);
    __tsan_mutex_post_unlock(m, 0);
    real_g_cond_wait(c, m);
    __tsan_mutex_pre_lock(m, 0);
    __tsan_mutex_post_lock(m, 0, 0);
}

gboolean g_cond_wait_until(GCond *c, GMutex *m, gint64 end_time)
{
    REAL(g_cond_wait_until, wait_until_fn);
    __tsan_mutex_pre_unlock(m, 0);
    __tsan_mutex_post_unlock(m, 0);
    gboolean r = real_g_cond_wait_until(c, m, end_time);
    __tsan_mutex_pre_lock(m, 0);
    __tsan_mutex_post_lock(m, 0, 0);
    return r;
}

/* GstHarness hands buffers and events from the element's threads to the test thread
 * through GAsyncQueues. */
void g_async_queue_push(GAsyncQueue *q, gpointer data)
{
    REAL(g_async_queue_push, push_fn);
    __tsan_release(q);
    real_g_async_queue_push(q, data);
}

gpointer g_async_queue_pop(GAsyncQueue *q)
{
    REAL(g_async_queue_pop, pop_fn);
    gpointer r = real_g_async_queue_pop(q);
    __tsan_acquire(q);
    return r;
}

gpointer g_async_queue_try_pop(GAsyncQueue *q)
{
    REAL(g_async_queue_try_pop, pop_fn);
    gpointer r = real_g_async_queue_try_pop(q);
    __tsan_acquire(q);
    return r;
}

gpointer g_async_queue_timeout_pop(GAsyncQueue *q, guint64 timeout)
{
    REAL(g_async_queue_timeout_pop, timeout_pop_fn);
    gpointer r = real_g_async_queue_timeout_pop(q, timeout);
    __tsan_acquire(q);
    return r;
}

/* GstTask threads come from a GThreadPool: g_thread_pool_push hands the task to an
 * idle thread through the pool's queue inside libglib, which TSan cannot see, so
 * everything the pushing thread prepared (the task, its lock) would look unordered
 * with the task's thread.  The pool's function is wrapped to acquire what the push
 * released (the pushed pointer is the synchronisation address). */
typedef GThreadPool *(*pool_new_fn)(GFunc, gpointer, gint, gboolean, GError **);
typedef gboolean (*pool_push_fn)(GThreadPool *, gpointer, GError **);

typedef struct {
    GFunc func;
    gpointer user_data;
} pool_trampoline_data;

static void pool_trampoline(gpointer data, gpointer user_data)
{
    const pool_trampoline_data *t = user_data;
    __tsan_acquire(data);
    t->func(data, t->user_data);
}

GThreadPool *g_thread_pool_new(GFunc func, gpointer user_data, gint max_threads,
                               gboolean exclusive, GError **error)
{
    REAL(g_thread_pool_new, pool_new_fn);
    /* lives as long as the process: a pool does not say when it is freed to us */
    pool_trampoline_data *t = g_new(pool_trampoline_data, 1);
    t->func = func;
    t->user_data = user_data;
    return real_g_thread_pool_new(pool_trampoline, t, max_threads, exclusive, error);
}

gboolean g_thread_pool_push(GThreadPool *pool, gpointer data, GError **error)
{
    REAL(g_thread_pool_push, pool_push_fn);
    __tsan_release(data);
    return real_g_thread_pool_push(pool, data, error);
}
